package io.hivebridge.spark;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.BinaryComparison;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.EqualNullSafe;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GreaterThan;
import org.apache.spark.sql.catalyst.expressions.GreaterThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.In;
import org.apache.spark.sql.catalyst.expressions.InSet;
import org.apache.spark.sql.catalyst.expressions.LessThan;
import org.apache.spark.sql.catalyst.expressions.LessThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Not;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.execution.datasources.DataSourceStrategy$;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;

import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A scan's filter as the planner's JSON, with the comparisons Spark's data source filters cannot carry: a decimal
 * or integer column compared with a double literal ({@code amount > 1e9}) is analyzed as
 * {@code cast(amount as double) > 1.0E9}, which {@code DataSourceStrategy.translateFilter} drops (its column is
 * inside a cast), so no file was pruned. Such a comparison (=, <=>, <, <=, >, >=, IN with double literals) becomes
 * a leaf marked {@code "cast":"double"}: the planner judges the column's exact bounds by the values whose double
 * compares like the literal (the cast is monotone). AND / OR / NOT are kept around the parts, each part either
 * such a comparison or a filter Spark translates; a part neither is {@code {"op":"unknown"}} (the planner keeps
 * files for it as its polarity requires).
 */
final class DoubleCasts {
  private DoubleCasts() {}

  /** The filter as JSON, or null when no part of it is understood (it prunes nothing). */
  static String json(Expression e) {
    String out = part(e);
    return out.startsWith("{\"op\":\"unknown\"") ? null : out;
  }

  private static String part(Expression e) {
    if (e instanceof And a) {
      return "{\"op\":\"and\",\"l\":" + part(a.left()) + ",\"r\":" + part(a.right()) + "}";
    } else if (e instanceof Or o) {
      return "{\"op\":\"or\",\"l\":" + part(o.left()) + ",\"r\":" + part(o.right()) + "}";
    } else if (e instanceof Not n) {
      return "{\"op\":\"not\",\"c\":" + part(n.child()) + "}";
    }
    Option<Filter> f = Option.empty();
    try {
      f = DataSourceStrategy$.MODULE$.translateFilter(e, true);
    } catch (RuntimeException ignored) {
      // not translated: perhaps a cast comparison
    }
    if (f.isDefined()) {
      return Protocol.filter(f.get());
    }
    String cast = castComparison(e);
    return cast != null ? cast : "{\"op\":\"unknown\"}";
  }

  /** {@code cast(column as double) op literal} (either side) or its IN, as a JSON leaf; null otherwise. */
  private static String castComparison(Expression e) {
    if (e instanceof BinaryComparison c) {
      String op = op(c);
      if (op == null) {
        return null;
      }
      String left = column(c.left());
      String right = column(c.right());
      if (left != null && isDouble(c.right())) {
        return leaf(op, left, Protocol.value(((Literal) c.right()).value()));
      }
      if (right != null && isDouble(c.left())) {
        return leaf(flipped(op), right, Protocol.value(((Literal) c.left()).value()));
      }
      return null;
    }
    if (e instanceof In in) {
      String name = column(in.value());
      if (name == null) {
        return null;
      }
      List<String> values = new ArrayList<>();
      for (Expression item : CollectionConverters.asJava(in.list())) {
        if (!isDouble(item)) {
          return null;
        }
        values.add(Protocol.value(((Literal) item).value()));
      }
      return leaf("in", name, "[" + String.join(",", values) + "]");
    }
    if (e instanceof InSet in) {
      String name = column(in.child());
      if (name == null) {
        return null;
      }
      List<String> values = new ArrayList<>();
      scala.collection.Iterator<Object> it = in.hset().iterator();
      while (it.hasNext()) {
        Object v = it.next();
        if (!(v instanceof Double)) {
          return null;
        }
        values.add(Protocol.value(v));
      }
      return values.isEmpty() ? null : leaf("in", name, "[" + String.join(",", values) + "]");
    }
    return null;
  }

  private static String op(BinaryComparison c) {
    if (c instanceof EqualTo) {
      return "eq";
    } else if (c instanceof EqualNullSafe) {
      return "nse";
    } else if (c instanceof LessThan) {
      return "lt";
    } else if (c instanceof LessThanOrEqual) {
      return "le";
    } else if (c instanceof GreaterThan) {
      return "gt";
    } else if (c instanceof GreaterThanOrEqual) {
      return "ge";
    }
    return null;
  }

  /** {@code 5 < x} is {@code x > 5}. */
  private static String flipped(String op) {
    return switch (op) {
      case "lt" -> "gt";
      case "le" -> "ge";
      case "gt" -> "lt";
      case "ge" -> "le";
      default -> op;
    };
  }

  /** The name of a decimal or integer column cast to double (quoted as Spark quotes a name holding a dot), else
   * null. */
  private static String column(Expression e) {
    if (!(e instanceof Cast c) || !(c.dataType() instanceof DoubleType)
        || !(c.child() instanceof AttributeReference a)) {
      return null;
    }
    Object t = a.dataType();
    if (!(t instanceof DecimalType || t instanceof LongType || t instanceof IntegerType || t instanceof ShortType
        || t instanceof ByteType)) {
      return null;
    }
    String name = a.name();
    return name.contains(".") || name.contains("`") ? "`" + name.replace("`", "``") + "`" : name;
  }

  private static boolean isDouble(Expression e) {
    return e instanceof Literal l && l.dataType() instanceof DoubleType && l.value() instanceof Double;
  }

  private static String leaf(String op, String attribute, String value) {
    return "{\"op\":\"" + op + "\",\"a\":" + Protocol.json(attribute) + ",\"v\":" + value + ",\"cast\":\"double\"}";
  }
}
