package io.hivebridge.spark;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The driver's link to hive-bridge's Python planner: a {@code java.util.function.Function<String, String>} the
 * Python side registers through py4j's callback server. Requests and answers are text (see {@link Protocol}).
 * Calls run on a pool thread so that a planner that hangs is cut off after the timeout.
 */
public final class Planner {
  private static volatile Function<String, String> planner;
  private static volatile long timeoutMillis = 300_000L;
  /** the private folder the planner writes long answers into (the only place an answer file is read from) */
  private static volatile Path answers;
  /** the name of an answer file (Python's {@code tempfile.mkstemp} with the planner's prefix and suffix) */
  private static final java.util.regex.Pattern ANSWER_NAME =
      java.util.regex.Pattern.compile("hive-bridge-answer-[A-Za-z0-9_]+\\.txt");
  private static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "hive-bridge-planner");
    t.setDaemon(true);
    return t;
  });

  private Planner() {}

  /** Registers the Python planner (called by {@code hive_bridge.spark.register}). */
  public static void register(Function<String, String> p, long timeoutMs) {
    planner = p;
    timeoutMillis = timeoutMs;
  }

  /**
   * Registers the Python planner and the private folder its long answers come through (an answer naming a file
   * anywhere else is refused).
   */
  public static void register(Function<String, String> p, long timeoutMs, String answerFolder) {
    answers = Path.of(answerFolder).toAbsolutePath().normalize();
    register(p, timeoutMs);
  }

  public static boolean registered() {
    return planner != null;
  }

  /** The planner's answer to one request; a failure, an error answer or a timeout is an exception naming what. */
  static String[] call(Supplier<String> what, String request) {
    return call(what, null, request);
  }

  /**
   * {@link #call(Supplier, String)} for a request about one table: an error answer that does not name
   * {@code table} (a path) gets {@code what} (the table and the scan's filters) in front.
   */
  static String[] call(Supplier<String> what, String table, String request) {
    Function<String, String> p = planner;
    if (p == null) {
      throw new IllegalArgumentException("hudi-hive: " + what.get() + ": the hive-bridge planner is not registered in "
          + "this driver: call hive_bridge.spark.register(spark) in the Python process that owns the session, or "
          + "serve the tables to spark-sql / beeline / JDBC clients with `hive-bridge serve --lake DIR` (a driver "
          + "started by spark-sql or spark-submit has no Python planner)");
    }
    long timeout = timeoutMillis;
    Future<String> answer = POOL.submit(() -> p.apply(request));
    String text;
    try {
      text = answer.get(timeout, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      answer.cancel(true);
      throw new IllegalArgumentException("hudi-hive: " + what.get() + ": the hive-bridge planner did not answer within "
          + timeout + " ms (spark.hive_bridge.planner.timeoutMs); the query is stopped rather than read unplanned");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalArgumentException("hudi-hive: " + what.get() + ": interrupted while planning");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      String msg = String.valueOf(cause.getMessage());
      int cut = msg.indexOf('\n');
      throw new IllegalArgumentException("hudi-hive: " + what.get() + ": the hive-bridge planner failed: "
          + (cut > 0 ? msg.substring(0, cut) : msg));
    }
    if (text == null) {
      throw new IllegalArgumentException("hudi-hive: " + what.get() + ": the hive-bridge planner gave no answer");
    }
    String spooled = Protocol.spooledFile(text);
    if (spooled != null) { // a long answer comes through a file (py4j moves long strings slowly)
      text = readAnswer(what, spooled);
    }
    String[] lines = Protocol.lines(text);
    String msg = Protocol.errorMessage(lines[0]);
    if (msg != null) {
      if (table != null && !msg.contains(table)) {
        msg = "hudi-hive: " + what.get() + ": " + msg;
      }
      throw new IllegalArgumentException(msg);
    }
    return lines;
  }

  /**
   * The answer in the file {@code name}, which is then deleted. Only a regular file (never a link) named as the
   * planner names them, directly in the folder registered with {@link #register(Function, long, String)}, is
   * read or deleted.
   */
  private static String readAnswer(Supplier<String> what, String name) {
    Path folder = answers;
    Path spool = Path.of(name).toAbsolutePath().normalize();
    if (folder == null || !folder.equals(spool.getParent())
        || !ANSWER_NAME.matcher(spool.getFileName().toString()).matches()) {
      throw new IllegalArgumentException("hudi-hive: " + what.get() + ": the planner's answer names the file "
          + name + ", which is not an answer file of its answer folder " + folder + "; not read");
    }
    try {
      BasicFileAttributes attrs = Files.readAttributes(spool, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      if (!attrs.isRegularFile()) {
        throw new IllegalArgumentException("hudi-hive: " + what.get() + ": the planner's answer file " + spool
            + " is not a regular file; not read");
      }
      try (InputStream in = Files.newInputStream(spool, LinkOption.NOFOLLOW_LINKS)) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("hudi-hive: " + what.get() + ": cannot read the planner's answer " + spool
          + ": " + e.getMessage());
    } finally {
      try {
        Files.deleteIfExists(spool); // in the private folder: the file itself (a link would be removed, not followed)
      } catch (IOException ignored) {
        // a file left behind in the private folder (removed with it when the Python process exits)
      }
    }
  }

  /** The pin ids of the hudi-hive relations a plan reads, comma-separated (for tests and reports). */
  public static String pinsOf(org.apache.spark.sql.catalyst.plans.logical.LogicalPlan plan) {
    StringBuilder b = new StringBuilder();
    scala.collection.Iterator<org.apache.spark.sql.catalyst.plans.logical.LogicalPlan> it =
        plan.collectLeaves().iterator();
    while (it.hasNext()) {
      if (it.next() instanceof org.apache.spark.sql.execution.datasources.LogicalRelation r
          && r.relation() instanceof org.apache.spark.sql.execution.datasources.HadoopFsRelation h
          && h.location() instanceof HudiHiveFileIndex index) {
        if (b.length() > 0) {
          b.append(',');
        }
        b.append(index.id());
      }
    }
    return b.toString();
  }

  /**
   * The files the hudi-hive scans of an executed plan read (Spark's "number of files read" metric of each file
   * source scan over a {@link HudiHiveFileIndex}), adaptive plans and query stages unwrapped; for tests and
   * reports.
   */
  public static long filesRead(org.apache.spark.sql.execution.SparkPlan plan) {
    if (plan instanceof org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec a) {
      return filesRead(a.executedPlan());
    }
    if (plan instanceof org.apache.spark.sql.execution.adaptive.QueryStageExec q) {
      return filesRead(q.plan());
    }
    long n = 0;
    if (plan instanceof org.apache.spark.sql.execution.FileSourceScanExec scan
        && scan.relation().location() instanceof HudiHiveFileIndex) {
      scala.Option<org.apache.spark.sql.execution.metric.SQLMetric> m = scan.metrics().get("numFiles");
      if (m.isDefined()) {
        n += m.get().value();
      }
    }
    scala.collection.Iterator<org.apache.spark.sql.execution.SparkPlan> it = plan.children().iterator();
    while (it.hasNext()) {
      n += filesRead(it.next());
    }
    return n;
  }
}
