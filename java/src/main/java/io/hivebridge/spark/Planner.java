package io.hivebridge.spark;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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

  public static boolean registered() {
    return planner != null;
  }

  /** The planner's answer to one request; a failure, an error answer or a timeout is an exception naming what. */
  static String[] call(Supplier<String> what, String request) {
    Function<String, String> p = planner;
    if (p == null) {
      throw new IllegalArgumentException("hudi-hive: " + what.get() + ": the hive-bridge planner is not registered in "
          + "this driver: call hive_bridge.spark.register(spark) in the Python process that owns the session");
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
    if (text.startsWith("FILE\t")) { // a long answer comes through a temporary file (py4j moves long strings slowly)
      Path spool = Path.of(text.substring(5));
      try {
        text = Files.readString(spool, StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new IllegalArgumentException("hudi-hive: " + what.get() + ": cannot read the planner's answer " + spool
            + ": " + e.getMessage());
      } finally {
        try {
          Files.deleteIfExists(spool);
        } catch (IOException ignored) {
          // a temporary file left behind
        }
      }
    }
    String[] lines = text.split("\n", -1);
    if (!"OK".equals(lines[0])) {
      String msg = lines[0].startsWith("ERR\t") ? Protocol.unquote(lines[0].substring(4)) : lines[0];
      throw new IllegalArgumentException(msg);
    }
    return lines;
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
