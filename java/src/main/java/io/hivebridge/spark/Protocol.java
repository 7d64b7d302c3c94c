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
 * Text forms exchanged with the Python planner: Spark's data source filters as JSON (every value typed, so the
 * Python side reads it without guessing), and percent-encoded fields in the planner's tab-separated answers.
 */
final class Protocol {
  private Protocol() {}

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
