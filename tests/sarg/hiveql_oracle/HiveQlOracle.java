// Oracle for sarg.hiveql: builds the SearchArgument of a filter with Hive's and Spark's own code.
//
//   java -cp <pyspark/jars/*>:<dir> HiveQlOracle hive   < filters.jsonl
//   java -cp <pyspark/jars/*>:<dir> HiveQlOracle spark  < filters.jsonl
//
// Each input line is one filter as JSON (written by tests/sarg/hiveql_oracle/gen.py):
//   node  := {"op": "and"|"or"|"not", "args": [node...]}
//          | {"op": "="|"<=>"|"<>"|"<"|"<="|">"|">=", "args": [value, value]}
//          | {"op": "in", "args": [value, value...]}            (the first value is the tested one)
//          | {"op": "between", "invert": bool, "args": [value, low, high]}
//          | {"op": "isnull"|"isnotnull", "args": [value]}
//          | value                                              (a bare boolean column)
//   value := {"col": name, "type": hive type name}
//          | {"const": hive type name, "value": text or null}   (text as java.lang.*.valueOf reads it)
//          | {"fn": "upper", "args": [value]}                    (a function: never a column)
// For spark mode, constants are already in the column's type (Spark's analyzer casts them).
//
// hive:  ExprNodeGenericFuncDesc trees with Hive's real GenericUDFs, through hive-exec 2.3.10's
//        ConvertAstToSearchArg.create(conf, expr); prints SearchArgument.toString().
// spark: org.apache.spark.sql.sources.Filter objects (as Spark's DataSourceStrategy makes them: column on the
//        left, BETWEEN as >= AND <=, NOT IN as Not(In), a bare boolean column as EqualTo(b, true)) through
//        OrcFilters.createFilter; prints toString() or NONE when Spark pushes nothing.
// One output line per input line, flushed at once; a failure prints "ERROR <message>".

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.common.type.HiveChar;
import org.apache.hadoop.hive.common.type.HiveDecimal;
import org.apache.hadoop.hive.common.type.HiveVarchar;
import org.apache.hadoop.hive.ql.io.sarg.ConvertAstToSearchArg;
import org.apache.hadoop.hive.ql.io.sarg.SearchArgument;
import org.apache.hadoop.hive.ql.plan.ExprNodeColumnDesc;
import org.apache.hadoop.hive.ql.plan.ExprNodeConstantDesc;
import org.apache.hadoop.hive.ql.plan.ExprNodeDesc;
import org.apache.hadoop.hive.ql.plan.ExprNodeGenericFuncDesc;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDF;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFBetween;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFIn;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFOPAnd;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFOPEqual;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFOPEqualNS;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFOPEqualOrGreaterThan;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFOPEqualOrLessThan;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFOPGreaterThan;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFOPLessThan;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFOPNot;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFOPNotEqual;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFOPNotNull;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFOPNull;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFOPOr;
import org.apache.hadoop.hive.ql.udf.generic.GenericUDFUpper;
import org.apache.hadoop.hive.serde2.typeinfo.BaseCharTypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfo;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfoFactory;
import org.apache.hadoop.hive.serde2.typeinfo.TypeInfoUtils;
import org.apache.spark.sql.execution.datasources.orc.OrcFilters;
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
import org.apache.spark.sql.types.StructType;

public class HiveQlOracle {
  private static final ObjectMapper JSON = new ObjectMapper();

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    Configuration conf = new Configuration(false);
    StructType schema = args.length > 1 ? StructType.fromDDL(args[1]) : null;
    PrintStream out = new PrintStream(System.out, false, "UTF-8");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) {
        continue;
      }
      try {
        JsonNode node = JSON.readTree(line);
        if (mode.equals("hive")) {
          List<ExprNodeDesc> root = new ArrayList<>();
          root.add(hiveNode(node));
          ExprNodeGenericFuncDesc expr = func(new GenericUDFOPAnd(), root);
          SearchArgument sarg = ConvertAstToSearchArg.create(conf, expr);
          out.println(oneLine(sarg.toString()));
        } else {
          List<Filter> conjuncts = new ArrayList<>();
          Filter filter = sparkNode(node);
          splitAnd(filter, conjuncts);
          scala.Option<SearchArgument> sarg = OrcFilters.createFilter(
              schema, scala.jdk.javaapi.CollectionConverters.asScala(conjuncts).toList(),
              OrcFilters.createFilter$default$3());
          out.println(sarg.isDefined() ? oneLine(sarg.get().toString()) : "NONE");
        }
      } catch (Throwable e) {
        Throwable root = e;
        while (root.getCause() != null) {
          root = root.getCause();
        }
        out.println("ERROR " + oneLine(String.valueOf(root)));
      }
      out.flush();  // one answer per line as it comes: a test may keep one JVM and ask line by line
    }
    out.flush();
  }

  private static String oneLine(String s) {
    // SearchArgument text never holds a newline unless a string literal does; keep one answer per line
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r");
  }

  // ---------------------------------------------------------------------------------------------- Hive --
  private static ExprNodeGenericFuncDesc func(GenericUDF udf, List<ExprNodeDesc> kids) {
    return new ExprNodeGenericFuncDesc(TypeInfoFactory.booleanTypeInfo, udf, kids);
  }

  private static ExprNodeDesc hiveNode(JsonNode node) {
    if (!node.has("op")) {
      return hiveValue(node);
    }
    String op = node.get("op").asText();
    List<ExprNodeDesc> kids = new ArrayList<>();
    if (op.equals("between")) {
      kids.add(new ExprNodeConstantDesc(TypeInfoFactory.booleanTypeInfo, node.get("invert").asBoolean()));
    }
    boolean logical = op.equals("and") || op.equals("or") || op.equals("not");
    for (JsonNode kid : node.get("args")) {
      kids.add(logical ? hiveNode(kid) : hiveValue(kid));
    }
    switch (op) {
      case "and": return func(new GenericUDFOPAnd(), kids);
      case "or": return func(new GenericUDFOPOr(), kids);
      case "not": return func(new GenericUDFOPNot(), kids);
      case "=": return func(new GenericUDFOPEqual(), kids);
      case "<=>": return func(new GenericUDFOPEqualNS(), kids);
      case "<>": return func(new GenericUDFOPNotEqual(), kids);
      case "<": return func(new GenericUDFOPLessThan(), kids);
      case "<=": return func(new GenericUDFOPEqualOrLessThan(), kids);
      case ">": return func(new GenericUDFOPGreaterThan(), kids);
      case ">=": return func(new GenericUDFOPEqualOrGreaterThan(), kids);
      case "in": return func(new GenericUDFIn(), kids);
      case "between": return func(new GenericUDFBetween(), kids);
      case "isnull": return func(new GenericUDFOPNull(), kids);
      case "isnotnull": return func(new GenericUDFOPNotNull(), kids);
      default: throw new IllegalArgumentException("unknown op " + op);
    }
  }

  private static ExprNodeDesc hiveValue(JsonNode node) {
    if (node.has("col")) {
      TypeInfo type = TypeInfoUtils.getTypeInfoFromTypeString(node.get("type").asText());
      return new ExprNodeColumnDesc(type, node.get("col").asText(), "t", false);
    }
    if (node.has("fn")) {
      List<ExprNodeDesc> kids = new ArrayList<>();
      for (JsonNode kid : node.get("args")) {
        kids.add(hiveValue(kid));
      }
      return new ExprNodeGenericFuncDesc(TypeInfoFactory.stringTypeInfo, new GenericUDFUpper(), kids);
    }
    String typeName = node.get("const").asText();
    TypeInfo type = TypeInfoUtils.getTypeInfoFromTypeString(typeName);
    JsonNode raw = node.get("value");
    if (raw == null || raw.isNull()) {
      return new ExprNodeConstantDesc(type, null);
    }
    String text = raw.asText();
    Object value;
    String base = typeName.replaceAll("\\(.*", "");
    switch (base) {
      case "tinyint": value = Byte.valueOf(text); break;
      case "smallint": value = Short.valueOf(text); break;
      case "int": value = Integer.valueOf(text); break;
      case "bigint": value = Long.valueOf(text); break;
      case "float": value = Float.valueOf(text); break;
      case "double": value = Double.valueOf(text); break;
      case "decimal": value = HiveDecimal.create(text); break;
      case "string": value = text; break;
      case "char": value = new HiveChar(text, ((BaseCharTypeInfo) type).getLength()); break;
      case "varchar": value = new HiveVarchar(text, ((BaseCharTypeInfo) type).getLength()); break;
      case "date": value = java.sql.Date.valueOf(text); break;
      case "timestamp": value = java.sql.Timestamp.valueOf(text); break;
      case "boolean": value = Boolean.valueOf(text); break;
      default: throw new IllegalArgumentException("unknown constant type " + typeName);
    }
    return new ExprNodeConstantDesc(type, value);
  }

  // --------------------------------------------------------------------------------------------- Spark --
  private static void splitAnd(Filter filter, List<Filter> out) {
    if (filter instanceof And) {
      splitAnd(((And) filter).left(), out);
      splitAnd(((And) filter).right(), out);
    } else {
      out.add(filter);
    }
  }

  private static Filter fold(List<Filter> kids, boolean and) {
    Filter result = kids.get(0);
    for (int i = 1; i < kids.size(); i++) {
      result = and ? new And(result, kids.get(i)) : new Or(result, kids.get(i));
    }
    return result;
  }

  private static Filter unsupported() {
    // a filter Spark's ORC conversion never takes (as a function or two-column comparison would be)
    return new StringContains("__unsupported__", "x");
  }

  private static Filter sparkNode(JsonNode node) {
    if (!node.has("op")) {
      return node.has("col") ? new EqualTo(node.get("col").asText(), Boolean.TRUE) : unsupported();
    }
    String op = node.get("op").asText();
    JsonNode args = node.get("args");
    if (op.equals("and") || op.equals("or")) {
      List<Filter> kids = new ArrayList<>();
      for (JsonNode kid : args) {
        kids.add(sparkNode(kid));
      }
      return fold(kids, op.equals("and"));
    }
    if (op.equals("not")) {
      return new Not(sparkNode(args.get(0)));
    }
    JsonNode first = args.get(0);
    if (op.equals("isnull") || op.equals("isnotnull")) {
      if (!first.has("col")) {
        return unsupported();
      }
      String col = first.get("col").asText();
      return op.equals("isnull") ? new IsNull(col) : new IsNotNull(col);
    }
    if (op.equals("in")) {
      if (!first.has("col")) {
        return unsupported();
      }
      Object[] values = new Object[args.size() - 1];
      for (int i = 1; i < args.size(); i++) {
        if (!args.get(i).has("const")) {
          return unsupported();
        }
        values[i - 1] = sparkValue(args.get(i));
      }
      return new In(first.get("col").asText(), values);
    }
    if (op.equals("between")) {
      if (!first.has("col") || !args.get(1).has("const") || !args.get(2).has("const")) {
        return unsupported();
      }
      String col = first.get("col").asText();
      Filter range = new And(new GreaterThanOrEqual(col, sparkValue(args.get(1))),
          new LessThanOrEqual(col, sparkValue(args.get(2))));
      return node.get("invert").asBoolean() ? new Not(range) : range;
    }
    JsonNode second = args.get(1);
    String col;
    JsonNode lit;
    if (first.has("col") && second.has("const")) {
      col = first.get("col").asText();
      lit = second;
    } else if (second.has("col") && first.has("const")) {
      col = second.get("col").asText();
      lit = first;
      op = flip(op);
    } else {
      return unsupported();
    }
    Object value = sparkValue(lit);
    switch (op) {
      case "=": return new EqualTo(col, value);
      case "<=>": return new EqualNullSafe(col, value);
      case "<>": return new Not(new EqualTo(col, value));
      case "<": return new LessThan(col, value);
      case "<=": return new LessThanOrEqual(col, value);
      case ">": return new GreaterThan(col, value);
      case ">=": return new GreaterThanOrEqual(col, value);
      default: throw new IllegalArgumentException("unknown op " + op);
    }
  }

  private static String flip(String op) {
    switch (op) {
      case "<": return ">";
      case "<=": return ">=";
      case ">": return "<";
      case ">=": return "<=";
      default: return op;
    }
  }

  private static Object sparkValue(JsonNode node) {
    JsonNode raw = node.get("value");
    if (raw == null || raw.isNull()) {
      return null;
    }
    String text = raw.asText();
    String base = node.get("const").asText().replaceAll("\\(.*", "");
    switch (base) {
      case "tinyint": return Byte.valueOf(text);
      case "smallint": return Short.valueOf(text);
      case "int": return Integer.valueOf(text);
      case "bigint": return Long.valueOf(text);
      case "float": return Float.valueOf(text);
      case "double": return Double.valueOf(text);
      case "decimal": return new java.math.BigDecimal(text);
      case "string": case "varchar": case "char": return text;
      case "date": return java.sql.Date.valueOf(text);
      case "timestamp": return java.sql.Timestamp.valueOf(text);
      case "boolean": return Boolean.valueOf(text);
      default: throw new IllegalArgumentException("unknown constant type " + base);
    }
  }
}
