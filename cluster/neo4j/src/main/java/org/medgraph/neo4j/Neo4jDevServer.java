package org.medgraph.neo4j;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.logging.Level;
import org.neo4j.logging.log4j.Log4jLogProvider;

/**
 * In-process Neo4j 5.26 Community server with OpenGDS 2.13 and a Bolt connector, for local
 * development and CI.
 *
 * <p>GDS wiring: the GDS kernel extensions (notably {@code OpenGraphDataScienceExtension}) are
 * found on the application classpath via ServiceLoader; the GDS procedures and functions are
 * registered by Neo4j from the jars in {@code plugin_dir} (the build copies the
 * {@code org.neo4j.gds} jars into {@code target/plugins}). The same jars are also on the classpath;
 * classes resolve parent-first, so each class is loaded once.
 *
 * <p>Usage: {@code java [jvm flags] -cp target/classes:target/lib/* org.medgraph.neo4j.Neo4jDevServer
 * [--host H] [--port P] [--home DIR] [--plugins DIR] [--pagecache SIZE] [--wipe]}. Defaults can
 * also come from environment variables (see {@link #usage()}). Runs until SIGTERM/SIGINT, then
 * shuts the database down cleanly.
 */
public final class Neo4jDevServer {

    private Neo4jDevServer() {}

    /** Parsed launch options. */
    static final class Options {
        String host = env("NEO4J_DEV_HOST", "127.0.0.1");
        int port = Integer.parseInt(env("NEO4J_DEV_PORT", "7687"));
        Path home = Path.of(env("NEO4J_DEV_HOME", "run/data"));
        Path plugins = Path.of(env("NEO4J_DEV_PLUGINS", "target/plugins"));
        String pagecache = env("NEO4J_DEV_PAGECACHE", "256m");
        String txMemory = env("NEO4J_DEV_TX_MEMORY", "1g");
        boolean wipe = "1".equals(env("NEO4J_DEV_WIPE", "0"));
        String password = System.getenv("NEO4J_DEV_PASSWORD");
        String logLevel = env("NEO4J_DEV_LOG_LEVEL", "INFO");
    }

    public static void main(String[] args) throws Exception {
        Options o;
        try {
            o = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println(usage());
            System.exit(2);
            return;
        }
        long t0 = System.nanoTime();
        Path home = o.home.toAbsolutePath().normalize();
        Path plugins = o.plugins.toAbsolutePath().normalize();
        if (!Files.isDirectory(plugins) || isEmpty(plugins)) {
            System.err.println("error: GDS plugin directory " + plugins + " is missing or empty (run ./neo4j-dev.sh build)");
            System.exit(2);
        }
        if (o.wipe) {
            wipe(home);
            log("wiped " + home);
        }
        Files.createDirectories(home);

        boolean auth = o.password != null && !o.password.isEmpty();
        Log4jLogProvider userLog = new Log4jLogProvider(System.out, Level.valueOf(o.logLevel.toUpperCase(Locale.ROOT)));
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setUserLogProvider(userLog)
                .setConfig(GraphDatabaseSettings.plugin_dir, plugins)
                .setConfig(GraphDatabaseSettings.procedure_unrestricted, List.of("gds.*"))
                .setConfig(GraphDatabaseSettings.auth_enabled, auth)
                .setConfig(GraphDatabaseSettings.pagecache_memory, parseBytes(o.pagecache))
                .setConfig(GraphDatabaseSettings.memory_transaction_global_max_size, parseBytes(o.txMemory))
                // dev/CI: keep transaction logs small
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "1 files")
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                // no usage reporting (the machines are offline anyway)
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(BoltConnector.listen_address, new SocketAddress(o.host, o.port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(o.host, o.port))
                // stop in ~1 s instead of the Bolt event loops' 5 s quiet period (dev/CI only)
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(5))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        AtomicBoolean stopping = new AtomicBoolean(false);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stopping.set(true);
            log("shutting down");
            try {
                dbms.shutdown();
            } catch (Throwable t) {
                System.err.println("error during shutdown: " + t);
            } finally {
                userLog.close();
                log("stopped");
                stopped.countDown();
            }
        }, "neo4j-dev-shutdown"));

        try {
            if (auth) {
                setPassword(dbms, o.password);
            }
            GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
            Object version = db.executeTransactionally(
                    "RETURN gds.version() AS v", Map.of(), r -> r.next().get("v"));
            double secs = (System.nanoTime() - t0) / 1e9;
            log(String.format(Locale.ROOT, "READY bolt://%s:%d gds=%s auth=%s home=%s startup=%.1fs",
                    o.host, o.port, version, auth ? "on" : "off", home, secs));
            long entries = db.executeTransactionally(
                    "CALL gds.list() YIELD name RETURN count(*) AS c", Map.of(), r -> (Long) r.next().get("c"));
            log("gds.list(): " + entries + " procedures/functions registered");
        } catch (Throwable t) {
            if (stopping.get()) {
                log("startup check interrupted by shutdown");
            } else {
                System.err.println("error: server started but GDS is not usable: " + t);
                t.printStackTrace();
                System.exit(1);
            }
        }
        stopped.await();
    }

    /** Sets a fixed password for the default user neo4j, without a forced change on first login. */
    private static void setPassword(DatabaseManagementService dbms, String password) {
        GraphDatabaseService system = dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME);
        try {
            system.executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $p CHANGE NOT REQUIRED", Map.of("p", password));
        } catch (RuntimeException e) {
            // Re-using a data directory: the password is already set to this value.
            if (!String.valueOf(e.getMessage()).contains("Old password and new password cannot be the same")) {
                throw e;
            }
        }
        log("auth enabled for user neo4j");
    }

    static Options parse(String[] args) {
        Options o = new Options();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--host" -> o.host = value(args, ++i, a);
                case "--port" -> o.port = Integer.parseInt(value(args, ++i, a));
                case "--home", "--data-dir" -> o.home = Path.of(value(args, ++i, a));
                case "--plugins" -> o.plugins = Path.of(value(args, ++i, a));
                case "--pagecache" -> o.pagecache = value(args, ++i, a);
                case "--tx-memory" -> o.txMemory = value(args, ++i, a);
                case "--log-level" -> o.logLevel = value(args, ++i, a);
                case "--wipe" -> o.wipe = true;
                case "-h", "--help" -> {
                    System.out.println(usage());
                    System.exit(0);
                }
                default -> throw new IllegalArgumentException("unknown argument " + a);
            }
        }
        if (o.port < 1 || o.port > 65535) {
            throw new IllegalArgumentException("bad port " + o.port);
        }
        return o;
    }

    static String usage() {
        return String.join("\n",
                "usage: Neo4jDevServer [--host H] [--port P] [--home DIR] [--plugins DIR]",
                "                      [--pagecache SIZE] [--tx-memory SIZE] [--log-level L] [--wipe]",
                "  --host       Bolt listen host      (env NEO4J_DEV_HOST, default 127.0.0.1)",
                "  --port       Bolt listen port      (env NEO4J_DEV_PORT, default 7687)",
                "  --home       Neo4j home/data dir   (env NEO4J_DEV_HOME, default run/data)",
                "  --plugins    GDS plugin jar dir    (env NEO4J_DEV_PLUGINS, default target/plugins)",
                "  --pagecache  page cache size       (env NEO4J_DEV_PAGECACHE, default 256m)",
                "  --tx-memory  global tx memory cap  (env NEO4J_DEV_TX_MEMORY, default 1g)",
                "  --log-level  DEBUG|INFO|WARN|ERROR (env NEO4J_DEV_LOG_LEVEL, default INFO)",
                "  --wipe       delete the home dir before starting (env NEO4J_DEV_WIPE=1)",
                "  env NEO4J_DEV_PASSWORD: if set, auth is enabled and user neo4j gets this password",
                "                          (at least 8 characters); otherwise auth is disabled.");
    }

    private static String value(String[] args, int i, String flag) {
        if (i >= args.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return args[i];
    }

    private static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? dflt : v;
    }

    /** Parses sizes such as 512m, 1g, 64k or a plain number of bytes. */
    static long parseBytes(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        if (t.endsWith("b")) {
            t = t.substring(0, t.length() - 1);
        }
        long mult = 1;
        char last = t.isEmpty() ? ' ' : t.charAt(t.length() - 1);
        switch (last) {
            case 'k' -> mult = 1L << 10;
            case 'm' -> mult = 1L << 20;
            case 'g' -> mult = 1L << 30;
            default -> { }
        }
        if (mult != 1) {
            t = t.substring(0, t.length() - 1);
        }
        try {
            return Long.parseLong(t.trim()) * mult;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad size " + s);
        }
    }

    private static boolean isEmpty(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.findAny().isEmpty();
        }
    }

    private static void wipe(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }

    private static void log(String msg) {
        System.out.println("[neo4j-dev] " + msg);
        System.out.flush();
    }
}
