package io.hivebridge.spark;

import java.math.BigDecimal;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.Map;

import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualNullSafe;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.IsNotNull;
import org.apache.spark.sql.sources.IsNull;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.sources.Or;
import org.apache.spark.sql.sources.StringContains;
import org.apache.spark.sql.sources.StringEndsWith;
import org.apache.spark.sql.sources.StringStartsWith;

/**
 * Every text form exchanged with the Python planner, in one place on this side ({@code hive_bridge/spark/protocol.py}
 * is the one place on the other; a test checks that the two agree): the requests (open, plan, refresh), the answer
 * heads (OK, ERR, FILE), the open answer's fields and the plan answer's partition and file lines. Spark's data
 * source filters travel as JSON (every value typed, so the Python side reads it without guessing); answer fields
 * are percent-encoded.
 */
public final class Protocol {
  public static final String OPEN = "open";
  public static final String PLAN = "plan";
  public static final String REFRESH = "refresh";
  public static final String OK = "OK";
  public static final String ERR = "ERR";
  public static final String FILE = "FILE";
  /** the heads of a plan answer's lines: a partition's values, one file */
  public static final String PARTITION = "P";
  public static final String FILE_LINE = "F";
  /** a null partition value */
  public static final String NULL = "\\N";
  /** the open request's option that carries the session's time zone (no data source option starts with NUL) */
  public static final String TIME_ZONE_OPTION = "\0timeZone";
  public static final String SEP = "\t";

  private Protocol() {}

  /** Every fixed form by name, as JSON (what {@code protocol.forms()} on the Python side must equal). */
  public static String forms() {
    Map<String, String> m = new java.util.LinkedHashMap<>();
    m.put("open", OPEN);
    m.put("plan", PLAN);
    m.put("refresh", REFRESH);
    m.put("ok", OK);
    m.put("err", ERR);
    m.put("file", FILE);
    m.put("partition", PARTITION);
    m.put("fileLine", FILE_LINE);
    m.put("null", NULL);
    m.put("timeZoneOption", TIME_ZONE_OPTION);
    m.put("sep", SEP);
    return options(m);
  }

  /** The request that opens a table: the data source's options and the session's time zone. */
  public static String openRequest(Map<String, String> options, String timeZone) {
    Map<String, String> all = new java.util.HashMap<>(options);
    all.put(TIME_ZONE_OPTION, timeZone);
    return OPEN + SEP + options(all);
  }

  /** The request for the files one scan of relation {@code pin} reads, given its filters as JSON. */
  public static String planRequest(String pin, String filtersJson) {
    return PLAN + SEP + pin + "\n" + filtersJson;
  }

  /**
   * {@link #planRequest(String, String)} naming the statement the scan belongs to (the thread's Spark job group:
   * Spark's Thrift Server sets it to the statement id), for scan reports; none: the two-field form.
   */
  public static String planRequest(String pin, String statement, String filtersJson) {
    if (statement == null || statement.isEmpty()) {
      return planRequest(pin, filtersJson);
    }
    return PLAN + SEP + pin + SEP + statement.replaceAll("[\\t\\r\\n]", " ") + "\n" + filtersJson;
  }

  public static String refreshRequest(String pin) {
    return REFRESH + SEP + pin;
  }

  /** The answer to an open request: the relation's pin, root, schemas (Spark's JSON) and size. */
  public record Opened(String pin, String root, String dataSchema, String partitionSchema, long sizeInBytes) {
    /** An open answer's lines (the first, OK, checked by {@link Planner#call}). */
    public static Opened of(String[] lines) {
      if (lines.length < 6) {
        throw new IllegalArgumentException("hudi-hive: the planner's answer to open has " + lines.length
            + " lines, not 6");
      }
      return new Opened(lines[1], lines[2], lines[3], lines[4], Long.parseLong(lines[5]));
    }

    /** The fields as JSON (for the agreement test). */
    public String json() {
      Map<String, String> m = new java.util.LinkedHashMap<>();
      m.put("pin", pin);
      m.put("root", root);
      m.put("dataSchema", dataSchema);
      m.put("partitionSchema", partitionSchema);
      m.put("sizeInBytes", Long.toString(sizeInBytes));
      return options(m);
    }
  }

  /** An answer's text split into lines, every one kept (a trailing empty line too); the caller reads the first with
   * {@link #errorMessage}. */
  public static String[] lines(String text) {
    return text.split("\n", -1);
  }

  /** The message of an error answer's first line, or null when the answer is not an error. */
  public static String errorMessage(String first) {
    if (OK.equals(first)) {
      return null;
    }
    return first.startsWith(ERR + SEP) ? unquote(first.substring(ERR.length() + SEP.length())) : first;
  }

  /** A plan answer's partition line (split at {@link #SEP}) as the partition's values, decoded (null for null). */
  public static String[] partitionValues(String[] cols) {
    String[] out = new String[cols.length - 1];
    for (int i = 1; i < cols.length; i++) {
      out[i - 1] = cols[i].equals(NULL) ? null : unquote(cols[i]);
    }
    return out;
  }

  /** The file named by an answer that comes through a file, or null. */
  public static String spooledFile(String text) {
    return text.startsWith(FILE + SEP) ? text.substring(FILE.length() + SEP.length()) : null;
  }

  static String unquote(String s) {
    return URLDecoder.decode(s, StandardCharsets.UTF_8);
  }

  static String json(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20 || c > 0x7e) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }

  static String options(Map<String, String> options) {
    StringBuilder b = new StringBuilder("{");
    for (Map.Entry<String, String> e : options.entrySet()) {
      if (b.length() > 1) {
        b.append(',');
      }
      b.append(json(e.getKey())).append(':').append(json(e.getValue()));
    }
    return b.append('}').toString();
  }

  /** A filter as JSON; a filter or value this does not know becomes {"op":"unknown"} (keeps every file). */
  static String filter(Filter f) {
    if (f instanceof And a) {
      return "{\"op\":\"and\",\"l\":" + filter(a.left()) + ",\"r\":" + filter(a.right()) + "}";
    } else if (f instanceof Or o) {
      return "{\"op\":\"or\",\"l\":" + filter(o.left()) + ",\"r\":" + filter(o.right()) + "}";
    } else if (f instanceof Not n) {
      return "{\"op\":\"not\",\"c\":" + filter(n.child()) + "}";
    } else if (f instanceof EqualTo e) {
      return leaf("eq", e.attribute(), value(e.value()));
    } else if (f instanceof EqualNullSafe e) {
      return leaf("nse", e.attribute(), value(e.value()));
    } else if (f instanceof LessThan e) {
      return leaf("lt", e.attribute(), value(e.value()));
    } else if (f instanceof LessThanOrEqual e) {
      return leaf("le", e.attribute(), value(e.value()));
    } else if (f instanceof GreaterThan e) {
      return leaf("gt", e.attribute(), value(e.value()));
    } else if (f instanceof GreaterThanOrEqual e) {
      return leaf("ge", e.attribute(), value(e.value()));
    } else if (f instanceof In e) {
      StringBuilder b = new StringBuilder("[");
      for (Object v : e.values()) {
        if (b.length() > 1) {
          b.append(',');
        }
        b.append(value(v));
      }
      return leaf("in", e.attribute(), b.append(']').toString());
    } else if (f instanceof IsNull e) {
      return leaf("isnull", e.attribute(), "null");
    } else if (f instanceof IsNotNull e) {
      return leaf("notnull", e.attribute(), "null");
    } else if (f instanceof StringStartsWith e) {
      return leaf("startswith", e.attribute(), value(e.value()));
    } else if (f instanceof StringEndsWith e) {
      return leaf("endswith", e.attribute(), value(e.value()));
    } else if (f instanceof StringContains e) {
      return leaf("contains", e.attribute(), value(e.value()));
    }
    return "{\"op\":\"unknown\",\"text\":" + json(String.valueOf(f)) + "}";
  }

  private static String leaf(String op, String attribute, String value) {
    return "{\"op\":\"" + op + "\",\"a\":" + json(attribute) + ",\"v\":" + value + "}";
  }

  private static String typed(String type, String value) {
    return "{\"t\":\"" + type + "\",\"v\":" + value + "}";
  }

  static String value(Object v) {
    if (v == null) {
      return "null";
    } else if (v instanceof Boolean b) {
      return typed("bool", b.toString());
    } else if (v instanceof Byte || v instanceof Short || v instanceof Integer || v instanceof Long) {
      return typed("int", v.toString());
    } else if (v instanceof Float f) {
      // the float's exact value as a double (0.1f is 0.10000000149011612, not 0.1): a FLOAT column's values and
      // statistics compare with it exactly as Spark compares them
      return typed("float", json(Double.toString(f.doubleValue())));
    } else if (v instanceof Double) {
      return typed("float", json(v.toString()));
    } else if (v instanceof String s) {
      return typed("str", json(s));
    } else if (v instanceof BigDecimal d) {
      return typed("dec", json(d.toPlainString()));
    } else if (v instanceof java.sql.Timestamp t) {
      Instant i = t.toInstant();
      return typed("ts", Long.toString(Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000L),
          i.getNano() / 1000)));
    } else if (v instanceof Instant i) {
      return typed("ts", Long.toString(Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000L),
          i.getNano() / 1000)));
    } else if (v instanceof LocalDateTime t) {
      return typed("ntz", json(t.toString()));
    } else if (v instanceof java.sql.Date d) {
      return typed("date", Long.toString(d.toLocalDate().toEpochDay()));
    } else if (v instanceof LocalDate d) {
      return typed("date", Long.toString(d.toEpochDay()));
    }
    return typed("unknown", json(v.getClass().getName()));
  }
}
