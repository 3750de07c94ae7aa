// The AWS SDK for JavaScript v3 against the SQS endpoint: run by
// tests/sqs/test_node_client.py with SQS_ENDPOINT, QUEUE_URL and the key in
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY. The SDK checks each answer's
// MD5OfMessageBody itself and throws on a wrong one. Prints one JSON object.
import {
  GetQueueAttributesCommand,
  ListQueuesCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";

const client = new SQSClient({ endpoint: process.env.SQS_ENDPOINT, region: "eu-central-1" });
const QueueUrl = process.env.QUEUE_URL;
const sent = await client.send(
  new SendMessageCommand({
    QueueUrl,
    MessageBody: "from node: ünïcödé 🎉\r\n",
    MessageAttributes: {
      trace: { DataType: "String", StringValue: "t-1" },
      blob: { DataType: "Binary", BinaryValue: new Uint8Array([0, 255, 1]) },
    },
  }),
);
const batch = await client.send(
  new SendMessageBatchCommand({
    QueueUrl,
    Entries: [0, 1, 2].map((i) => ({ Id: `n${i}`, MessageBody: `node ${i}` })),
  }),
);
const listed = await client.send(new ListQueuesCommand({ QueueNamePrefix: "node-" }));
const attributes = await client.send(
  new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["VisibilityTimeout", "QueueArn"] }),
);
console.log(
  JSON.stringify({
    sent: { MessageId: sent.MessageId, MD5OfMessageAttributes: sent.MD5OfMessageAttributes },
    batch: { successful: batch.Successful.length, failed: (batch.Failed ?? []).length },
    queues: listed.QueueUrls,
    attributes: attributes.Attributes,
  }),
);
