"""A streaming analytics run as its own process, for tests that kill -9 it.

`python -m tests.pipeline.run_stream BOOTSTRAP QUEUE_JSON OUT_DIR CHECKPOINT_DIR`
"""

import json
import sys
from pathlib import Path

from kmqadmin.pipeline.events import QueueTopics
from kmqadmin.pipeline.job import AnalyticsJob, PipelineConfig
from kmqadmin.pipeline.session import spark_session

if __name__ == "__main__":
    bootstrap, queue, out, checkpoint = sys.argv[1:5]
    config = PipelineConfig(bootstrap, [QueueTopics(**json.loads(queue))], Path(out), "python")
    job = AnalyticsJob(spark_session("local[2]", "kmqadmin-stream-test"), config)
    job.run_stream(Path(checkpoint), lambda result: None, {"processingTime": "1 second"})
    job.spark.streams.awaitAnyTermination()
