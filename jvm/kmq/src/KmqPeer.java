import com.softwaremill.kmq.KafkaClients;
import com.softwaremill.kmq.KmqClient;
import com.softwaremill.kmq.KmqConfig;
import com.softwaremill.kmq.RedeliveryTracker;
import java.io.Closeable;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * SoftwareMill kmq's own Java client as a peer of kmqadmin's, for tests/peers.
 * Runs until killed; writes JSON lines to stdout, kmq's and Kafka's logs to stderr.
 *
 * <pre>
 * java KmqPeer consume --bootstrap B --topic T --markers M --group G --timeout-ms N [--skip v1,v2]
 *     kmq's KmqClient: nextBatch() (start markers, then offset commit), one line per
 *     record seen, then processed() (the end marker) for each record except a first
 *     delivery whose value is in --skip. A copy (one with a kmq-redelivery-count
 *     header) is always acked, so a skipped message is redelivered and then done.
 * java KmqPeer track --bootstrap B --topic T --markers M --group G --timeout-ms N [--use-now-after-ms N]
 *     kmq's RedeliveryTracker, group G on the markers topic.
 * </pre>
 */
public final class KmqPeer {
    private static final String REDELIVERY_COUNT = "kmq-redelivery-count";

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            usage("no mode given");
        }
        Map<String, String> opts = options(Arrays.copyOfRange(args, 1, args.length));
        KafkaClients clients = new KafkaClients(required(opts, "bootstrap"));
        long timeoutMs = Long.parseLong(required(opts, "timeout-ms"));
        String group = required(opts, "group");
        switch (args[0]) {
            case "consume" -> {
                KmqConfig config = new KmqConfig(
                        required(opts, "topic"), required(opts, "markers"), group, group + "__unused",
                        timeoutMs, 1000);
                Set<String> skip = new HashSet<>();
                for (String value : opts.getOrDefault("skip", "").split(",")) {
                    if (!value.isEmpty()) {
                        skip.add(value);
                    }
                }
                consume(config, clients, skip);
            }
            case "track" -> {
                KmqConfig config = new KmqConfig(
                        required(opts, "topic"), required(opts, "markers"), group + "__unused", group,
                        timeoutMs, Long.parseLong(opts.getOrDefault("use-now-after-ms", "1000")));
                Closeable tracker = RedeliveryTracker.start(clients, config);
                emit("{\"event\":\"tracking\"}");
                try {
                    Thread.sleep(Long.MAX_VALUE);
                } finally {
                    tracker.close();
                }
            }
            default -> usage("unknown mode " + args[0]);
        }
    }

    private static void consume(KmqConfig config, KafkaClients clients, Set<String> skip) throws Exception {
        try (KmqClient<byte[], byte[]> client = new KmqClient<>(
                config, clients, ByteArrayDeserializer.class, ByteArrayDeserializer.class, 100)) {
            emit("{\"event\":\"consuming\"}");
            while (true) {
                ConsumerRecords<byte[], byte[]> batch = client.nextBatch();
                for (ConsumerRecord<byte[], byte[]> record : batch) {
                    String value = record.value() == null ? null : utf8(record.value());
                    boolean copy = record.headers().lastHeader(REDELIVERY_COUNT) != null;
                    boolean ack = copy || value == null || !skip.contains(value);
                    emit(recordLine(record, value, ack));
                    if (ack) {
                        client.processed(record);
                    }
                }
            }
        }
    }

    private static String recordLine(ConsumerRecord<byte[], byte[]> record, String value, boolean ack) {
        StringBuilder headers = new StringBuilder("[");
        for (Header header : record.headers()) {
            if (headers.length() > 1) {
                headers.append(',');
            }
            headers.append('[').append(quote(header.key())).append(',')
                    .append(header.value() == null ? "null" : quote(hex(header.value()))).append(']');
        }
        headers.append(']');
        return "{\"event\":\"record\",\"topic\":" + quote(record.topic())
                + ",\"partition\":" + record.partition()
                + ",\"offset\":" + record.offset()
                + ",\"timestamp\":" + record.timestamp()
                + ",\"key\":" + (record.key() == null ? "null" : quote(utf8(record.key())))
                + ",\"value\":" + (value == null ? "null" : quote(value))
                + ",\"headers\":" + headers
                + ",\"acked\":" + ack + "}";
    }

    // --- plumbing ----------------------------------------------------------

    private static void emit(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static String utf8(byte[] data) {
        return new String(data, StandardCharsets.UTF_8);
    }

    private static String hex(byte[] data) {
        StringBuilder out = new StringBuilder();
        for (byte b : data) {
            out.append(String.format("%02x", b));
        }
        return out.toString();
    }

    private static String quote(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> opts = new HashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                usage("expected --name value pairs, got " + String.join(" ", args));
            }
            opts.put(args[i].substring(2), args[i + 1]);
        }
        return opts;
    }

    private static String required(Map<String, String> opts, String name) {
        String value = opts.get(name);
        if (value == null) {
            usage("--" + name + " is required");
        }
        return value;
    }

    private static void usage(String problem) {
        System.err.println("KmqPeer: " + problem);
        System.err.println("usage: KmqPeer consume|track --bootstrap B --topic T --markers M --group G"
                + " --timeout-ms N [--skip v1,v2] [--use-now-after-ms N]");
        System.exit(2);
    }

    private KmqPeer() {}
}
