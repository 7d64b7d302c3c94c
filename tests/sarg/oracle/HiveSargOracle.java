// The test oracle: Hive's own SearchArgument classes (pyspark's hive-storage-api-2.8.1.jar), driven from Python.
//
// Modes (one JSON object per output line, ASCII only):
//   truth                 TruthValue and/or (49 + 49), not (7) and isNeeded (7), as Hive computes them.
//   random SEED COUNT     COUNT random SearchArguments built with SearchArgumentFactory.newBuilder(): for each,
//                         the builder call script (replayable from Python), toString(), toOldString(), the typed
//                         leaves and a few evaluate() results.
//   script                reads builder call scripts (JSON arrays, one per line) from stdin and answers each the
//                         same way (or with {"error": ...} when Hive's builder throws).
//
// Script calls: ["startAnd"], ["startOr"], ["startNot"], ["end"], ["literal", TV],
//   [OP, column|null, TYPE, lit] for equals/nullSafeEquals/lessThan/lessThanEquals,
//   ["in", column|null, TYPE, [lit, ...]], ["between", column|null, TYPE, lo, hi], ["isNull", column|null, TYPE].
// Typed literal encoding (lossless): null; LONG decimal string; FLOAT the raw long bits of the double as a decimal
// string; STRING the string; DATE "yyyy-mm-dd"; DECIMAL the BigDecimal text given to HiveDecimal (scale kept);
// TIMESTAMP [wall-clock epoch seconds, nanos]; BOOLEAN true/false.
// Run with -Duser.timezone=UTC so java.sql.Date/Timestamp wall clocks map 1:1 to epoch values.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.apache.hadoop.hive.common.type.HiveDecimal;
import org.apache.hadoop.hive.ql.io.sarg.PredicateLeaf;
import org.apache.hadoop.hive.ql.io.sarg.SearchArgument;
import org.apache.hadoop.hive.ql.io.sarg.SearchArgument.TruthValue;
import org.apache.hadoop.hive.ql.io.sarg.SearchArgumentFactory;
import org.apache.hadoop.hive.ql.io.sarg.SearchArgumentImpl;
import org.apache.hadoop.hive.serde2.io.HiveDecimalWritable;

public final class HiveSargOracle {

  private static final PredicateLeaf.Type[] TYPES = PredicateLeaf.Type.values();
  private static final TruthValue[] TVS = TruthValue.values();

  /** Column names per type (a schema maps each to its type); dotted and mixed-case names included. */
  private static String[] columns(PredicateLeaf.Type type) {
    switch (type) {
      case LONG: return new String[] {"id", "n", "s1.count", "_col0"};
      case FLOAT: return new String[] {"f", "price", "s1.ratio"};
      case STRING: return new String[] {"name", "s", "s1.label", "Title"};
      case DATE: return new String[] {"d", "day"};
      case DECIMAL: return new String[] {"amount", "dec"};
      case TIMESTAMP: return new String[] {"ts", "s1.at"};
      default: return new String[] {"flag", "b"};
    }
  }

  private static final String[] STRINGS = {
    "", " ", "  ", "\t", "a b", "a  b", "trailing ", " leading", "a,b", ", ", ",", "(x)", "f(x, y)", "(a)(b)",
    "(", ")", "a)", "(a", ")(", "))", "((", "null", "NULL", "Null", "\u00e9", "na\u00efve caf\u00e9",
    "\u65e5\u672c\u8a9e", "\ud83d\ude00", "123", "-5", "007", "1.5", "1.0E-4", "NaN", "Infinity", "-0.0",
    "2023-01-01", "2023-01-01 10:00:00.0", "true", "false", "YES_NO_NULL", "leaf-0", "and", "or", "not",
    "expr", "=", "a = b", "DynamicValue(RS_7_x_min)", "x\ty", "\u00a0", "back\\slash", "quote\"s", "z",
    "hello world", "x ", " ", "A", "\u0000nul", "a\nb", "x\n",
  };
  private static final String[] ALPHABET = {
    "a", "b", "Z", " ", " ", "\t", "(", ")", ",", "-", ":", ".", "0", "1", "9", "\u00e9", "\u4e2d",
    "\ud83d\ude00", "null", "_", "=", "'", "\"",
  };

  private static final double[] DOUBLES = {
    0.0, -0.0, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1.0E-7, 1.0E-3, 9.99E-4,
    9999999.0, 1.0E7, 1.0E7 - 0.5, (double) 0.1f, (double) 3.4028235E38f, 0.1, 1.0 / 3, Double.MIN_VALUE,
    Double.MAX_VALUE, Double.MIN_NORMAL, 1.0E23, 2.0E-3, 123456.789, -1.5, 5.0, 100.0, -273.15, 1.0E-300,
    4.35, 0.3, 2.5E-5, 12345678.9, 1.0E21, 1.0E22,
  };

  private static final String[] DECIMALS = {
    "0", "0.00", "-0.0", "1", "12.50", "12.5", "-0.10", "100", "1E+3", "1.000", "0.001", "3.14159",
    "99999999999999999999999999999999999999", "-9999999999999999999999999999.9999999999",
    "0.00000000000000000000000000000000000001", "123456789.123456789", "2.50000", "-7",
  };

  private static final LocalDate[] DATES = {
    LocalDate.of(1970, 1, 1), LocalDate.of(2023, 1, 1), LocalDate.of(2000, 2, 29), LocalDate.of(1969, 12, 31),
    LocalDate.of(1582, 10, 15), LocalDate.of(1582, 10, 4), LocalDate.of(1900, 2, 28), LocalDate.of(1, 1, 1),
    LocalDate.of(9999, 12, 31), LocalDate.of(999, 7, 4), LocalDate.of(2038, 1, 19),
  };

  private final Random rnd;
  private final List<Object[]> usedLeaves = new ArrayList<>();

  private HiveSargOracle(long seed) {
    this.rnd = new Random(seed);
  }

  // ---------------------------------------------------------------------------------------------- literals

  /** A literal: the Java object Hive gets and its lossless JSON encoding. */
  private static final class Lit {
    final Object value;
    final String json;

    Lit(Object value, String json) {
      this.value = value;
      this.json = json;
    }
  }

  private static final Lit NULL = new Lit(null, "null");

  private Lit literal(PredicateLeaf.Type type) {
    switch (type) {
      case LONG: {
        long v;
        int k = rnd.nextInt(10);
        if (k == 0) {
          v = Long.MIN_VALUE;
        } else if (k == 1) {
          v = Long.MAX_VALUE;
        } else if (k == 2) {
          v = rnd.nextLong();
        } else if (k == 3) {
          v = rnd.nextBoolean() ? Integer.MIN_VALUE : Integer.MAX_VALUE;
        } else if (k == 4) {
          v = (1L << 53) + 1;
        } else {
          v = rnd.nextInt(21) - 10;
        }
        return new Lit(Long.valueOf(v), Json.str(Long.toString(v)));
      }
      case FLOAT: {
        double v;
        int k = rnd.nextInt(10);
        if (k < 5) {
          v = DOUBLES[rnd.nextInt(DOUBLES.length)];
        } else if (k < 7) {
          v = Math.round(rnd.nextGaussian() * 1000) / 100.0;
        } else if (k < 8) {
          v = (double) (float) (rnd.nextGaussian() * Math.pow(10, rnd.nextInt(20) - 10));
        } else {
          v = rnd.nextGaussian() * Math.pow(10, rnd.nextInt(40) - 20);
        }
        return new Lit(Double.valueOf(v), Json.str(Long.toString(Double.doubleToRawLongBits(v))));
      }
      case STRING: {
        String s;
        if (rnd.nextInt(3) > 0) {
          s = STRINGS[rnd.nextInt(STRINGS.length)];
        } else {
          StringBuilder b = new StringBuilder();
          int n = rnd.nextInt(7);
          for (int i = 0; i < n; i++) {
            b.append(ALPHABET[rnd.nextInt(ALPHABET.length)]);
          }
          s = b.toString();
        }
        return new Lit(s, Json.str(s));
      }
      case DATE: {
        LocalDate d = rnd.nextInt(3) == 0 ? DATES[rnd.nextInt(DATES.length)]
            : LocalDate.ofEpochDay(rnd.nextInt(2932897) - 719162);
        java.sql.Date date = java.sql.Date.valueOf(d);
        return new Lit(date, Json.str(date.toLocalDate().toString()));
      }
      case DECIMAL: {
        String text;
        if (rnd.nextBoolean()) {
          text = DECIMALS[rnd.nextInt(DECIMALS.length)];
        } else {
          BigInteger unscaled = new BigInteger(rnd.nextInt(100) + 1, rnd);
          if (rnd.nextBoolean()) {
            unscaled = unscaled.negate();
          }
          text = new BigDecimal(unscaled, rnd.nextInt(12)).toPlainString();
        }
        BigDecimal big = new BigDecimal(text);
        HiveDecimal hd = HiveDecimal.create(big);
        if (hd == null || hd.bigDecimalValue().compareTo(big) != 0) {  // out of Hive's range: keep it simple
          text = "1.10";
          hd = HiveDecimal.create(new BigDecimal(text));
        }
        return new Lit(new HiveDecimalWritable(hd), Json.str(text));
      }
      case TIMESTAMP: {
        long lo = -62135596800L;  // 0001-01-01 00:00:00
        long hi = 253402300799L;  // 9999-12-31 23:59:59
        int k = rnd.nextInt(4);
        LocalDateTime t = k == 0 ? DATES[rnd.nextInt(DATES.length)].atStartOfDay()
            : LocalDateTime.ofEpochSecond(k == 1 ? lo + Math.floorMod(rnd.nextLong(), hi - lo + 1)
                : -2208988800L + Math.floorMod(rnd.nextLong(), 6311433600L), 0, ZoneOffset.UTC);
        int[] nanos = {0, 0, 1, 999999999, 123456789, 100000000, 120000000, 123000000, 123456000, 500};
        int nano = rnd.nextInt(3) == 0 ? rnd.nextInt(1000000000) : nanos[rnd.nextInt(nanos.length)];
        java.sql.Timestamp ts = java.sql.Timestamp.valueOf(t.withNano(nano));
        return new Lit(ts, tsJson(ts));
      }
      default: {
        boolean v = rnd.nextBoolean();
        return new Lit(Boolean.valueOf(v), v ? "true" : "false");
      }
    }
  }

  private static String tsJson(java.sql.Timestamp ts) {
    LocalDateTime t = ts.toLocalDateTime();
    return "[" + t.toEpochSecond(ZoneOffset.UTC) + "," + t.getNano() + "]";
  }

  /** Encode what Hive holds (for the leaves): like the script encoding, DECIMAL as Hive's own value. */
  static String encode(Object v) {
    if (v == null) {
      return "null";
    } else if (v instanceof Long) {
      return Json.str(v.toString());
    } else if (v instanceof Double) {
      return Json.str(Long.toString(Double.doubleToRawLongBits((Double) v)));
    } else if (v instanceof String) {
      return Json.str((String) v);
    } else if (v instanceof java.sql.Date) {
      return Json.str(((java.sql.Date) v).toLocalDate().toString());
    } else if (v instanceof HiveDecimalWritable) {
      return Json.str(((HiveDecimalWritable) v).getHiveDecimal().bigDecimalValue().toPlainString());
    } else if (v instanceof java.sql.Timestamp) {
      return tsJson((java.sql.Timestamp) v);
    } else if (v instanceof Boolean) {
      return v.toString();
    }
    return Json.str("?" + v.getClass().getName() + ":" + v);
  }

  // ---------------------------------------------------------------------------------------------- trees

  private PredicateLeaf.Type anyType() {
    return TYPES[rnd.nextInt(TYPES.length)];
  }

  private String column(PredicateLeaf.Type type) {
    if (rnd.nextInt(60) == 0) {
      return null;  // a null column: Hive's builder adds YES_NO_NULL
    }
    String[] names = columns(type);
    return names[rnd.nextInt(names.length)];
  }

  /** One leaf call: {json, op, column, type, literal objects...}. */
  private Object[] leafCall() {
    if (!usedLeaves.isEmpty() && rnd.nextInt(6) == 0) {
      return usedLeaves.get(rnd.nextInt(usedLeaves.size()));  // the same leaf again: Hive merges equal leaves
    }
    PredicateLeaf.Type type = anyType();
    String col = column(type);
    String colJson = col == null ? "null" : Json.str(col);
    int k = rnd.nextInt(7);
    String[] ops = {"equals", "nullSafeEquals", "lessThan", "lessThanEquals", "in", "between", "isNull"};
    String op = ops[k];
    Object[] call;
    if (k < 4) {
      Lit lit = rnd.nextInt(40) == 0 ? NULL : literal(type);
      call = new Object[] {"[" + Json.str(op) + "," + colJson + ",\"" + type + "\"," + lit.json + "]",
          op, col, type, lit.value};
    } else if (k == 4) {
      int n = 1 + rnd.nextInt(rnd.nextInt(4) == 0 ? 8 : 3);
      StringBuilder json = new StringBuilder();
      Object[] vals = new Object[n];
      for (int i = 0; i < n; i++) {
        Lit lit = rnd.nextInt(8) == 0 ? NULL : literal(type);
        vals[i] = lit.value;
        json.append(i == 0 ? "" : ",").append(lit.json);
      }
      call = new Object[] {"[\"in\"," + colJson + ",\"" + type + "\",[" + json + "]]", op, col, type, vals};
    } else if (k == 5) {
      Lit lo = rnd.nextInt(30) == 0 ? NULL : literal(type);
      Lit hi = rnd.nextInt(30) == 0 ? NULL : literal(type);
      call = new Object[] {"[\"between\"," + colJson + ",\"" + type + "\"," + lo.json + "," + hi.json + "]",
          op, col, type, lo.value, hi.value};
    } else {
      call = new Object[] {"[\"isNull\"," + colJson + ",\"" + type + "\"]", op, col, type};
    }
    usedLeaves.add(call);
    return call;
  }

  private final List<String> script = new ArrayList<>();

  private void emitLeaf(SearchArgument.Builder b) {
    Object[] call = leafCall();
    script.add((String) call[0]);
    apply(b, call);
  }

  private static void apply(SearchArgument.Builder b, Object[] call) {
    String op = (String) call[1];
    String col = (String) call[2];
    PredicateLeaf.Type type = (PredicateLeaf.Type) call[3];
    switch (op) {
      case "equals": b.equals(col, type, call[4]); break;
      case "nullSafeEquals": b.nullSafeEquals(col, type, call[4]); break;
      case "lessThan": b.lessThan(col, type, call[4]); break;
      case "lessThanEquals": b.lessThanEquals(col, type, call[4]); break;
      case "in": b.in(col, type, (Object[]) call[4]); break;
      case "between": b.between(col, type, call[4], call[5]); break;
      default: b.isNull(col, type);
    }
  }

  private void start(SearchArgument.Builder b, String what) {
    script.add("[\"" + what + "\"]");
    if (what.equals("startAnd")) {
      b.startAnd();
    } else if (what.equals("startOr")) {
      b.startOr();
    } else {
      b.startNot();
    }
  }

  private void end(SearchArgument.Builder b) {
    script.add("[\"end\"]");
    b.end();
  }

  private void constant(SearchArgument.Builder b) {
    TruthValue tv = rnd.nextInt(3) == 0 ? TruthValue.YES_NO_NULL : TVS[rnd.nextInt(TVS.length)];
    script.add("[\"literal\",\"" + tv + "\"]");
    b.literal(tv);
  }

  /** A random subtree (the caller has an open parent). */
  private void tree(SearchArgument.Builder b, int depth) {
    int k = rnd.nextInt(depth <= 0 ? 10 : 16);
    if (k < 8) {
      emitLeaf(b);
    } else if (k < 9) {
      constant(b);
    } else if (k < 10) {
      if (depth > 0) {
        start(b, "startNot");
        tree(b, depth - 1);
        end(b);
      } else {
        emitLeaf(b);
      }
    } else {
      start(b, k < 13 ? "startOr" : "startAnd");
      int n = 1 + rnd.nextInt(4);
      for (int i = 0; i < n; i++) {
        tree(b, depth - 1);
      }
      end(b);
    }
  }

  /** An OR of ANDs sized around the 256-combination CNF threshold (maybe under NOTs, with extra disjuncts). */
  private void cnfStress(SearchArgument.Builder b) {
    int[][] shapes = {{4, 4}, {2, 8}, {2, 9}, {16, 2}, {17, 2}, {7, 3}, {6, 3}, {3, 5}, {257, 1}, {2, 2}};
    int[] shape = shapes[rnd.nextInt(shapes.length)];
    boolean negate = rnd.nextInt(3) == 0;
    if (negate) {  // NOT(AND of ORs) becomes an OR of ANDs after NOT push-down
      start(b, "startNot");
      start(b, "startAnd");
    } else {
      start(b, "startOr");
    }
    for (int i = 0; i < shape[1]; i++) {
      start(b, negate ? "startOr" : "startAnd");
      for (int j = 0; j < shape[0]; j++) {
        emitLeaf(b);
      }
      end(b);
    }
    if (rnd.nextBoolean()) {
      emitLeaf(b);
    }
    end(b);
    if (negate) {
      end(b);
    }
  }

  private String generate() {
    script.clear();
    usedLeaves.clear();
    SearchArgument.Builder b = SearchArgumentFactory.newBuilder();
    int shape = rnd.nextInt(20);
    if (shape == 0) {
      int n = rnd.nextInt(3);
      for (int i = 0; i < n; i++) {
        constant(b);
      }
    } else if (shape < 4) {
      cnfStress(b);
      if (rnd.nextBoolean()) {
        tree(b, 2);
      }
    } else {
      int n = 1 + rnd.nextInt(3);
      int depth = rnd.nextInt(5);
      for (int i = 0; i < n; i++) {
        tree(b, depth);
      }
    }
    return answer(String.join(",", script), b);
  }

  // ---------------------------------------------------------------------------------------------- output

  private String answer(String scriptJson, SearchArgument.Builder b) {
    StringBuilder out = new StringBuilder();
    out.append("{\"script\":[").append(scriptJson).append("]");
    SearchArgument sarg;
    try {
      sarg = b.build();
    } catch (RuntimeException e) {
      return out.append(",\"error\":").append(Json.str(e.toString())).append("}").toString();
    }
    out.append(",\"new\":").append(Json.str(sarg.toString()));
    out.append(",\"old\":").append(Json.str(((SearchArgumentImpl) sarg).toOldString()));
    out.append(",\"leaves\":[");
    List<PredicateLeaf> leaves = sarg.getLeaves();
    for (int i = 0; i < leaves.size(); i++) {
      PredicateLeaf leaf = leaves.get(i);
      out.append(i == 0 ? "[" : ",[").append(Json.str(leaf.getOperator().toString()))
          .append(",").append(Json.str(leaf.getType().toString()))
          .append(",").append(Json.str(leaf.getColumnName()))
          .append(",").append(encode(leaf.getLiteral())).append(",");
      List<Object> list = leaf.getLiteralList();
      if (list == null) {
        out.append("null");
      } else {
        out.append("[");
        for (int j = 0; j < list.size(); j++) {
          out.append(j == 0 ? "" : ",").append(encode(list.get(j)));
        }
        out.append("]");
      }
      out.append("]");
    }
    out.append("],\"evals\":[");
    for (int e = 0; e < 3; e++) {
      TruthValue[] values = new TruthValue[leaves.size()];
      StringBuilder vs = new StringBuilder();
      for (int i = 0; i < values.length; i++) {
        values[i] = TVS[rnd.nextInt(TVS.length)];
        vs.append(i == 0 ? "\"" : ",\"").append(values[i]).append("\"");
      }
      out.append(e == 0 ? "[[" : ",[[").append(vs).append("],\"").append(sarg.evaluate(values)).append("\"]");
    }
    return out.append("]}").toString();
  }

  private static String truthTables() {
    StringBuilder out = new StringBuilder("{");
    String[] names = {"and", "or"};
    for (String name : names) {
      out.append("\"").append(name).append("\":{");
      for (int i = 0; i < TVS.length; i++) {
        out.append(i == 0 ? "" : ",").append("\"").append(TVS[i]).append("\":{");
        for (int j = 0; j < TVS.length; j++) {
          TruthValue r = name.equals("and") ? TVS[i].and(TVS[j]) : TVS[i].or(TVS[j]);
          out.append(j == 0 ? "" : ",").append("\"").append(TVS[j]).append("\":\"").append(r).append("\"");
        }
        out.append("}");
      }
      out.append("},");
    }
    out.append("\"not\":{");
    for (int i = 0; i < TVS.length; i++) {
      out.append(i == 0 ? "" : ",").append("\"").append(TVS[i]).append("\":\"").append(TVS[i].not()).append("\"");
    }
    out.append("},\"isNeeded\":{");
    for (int i = 0; i < TVS.length; i++) {
      out.append(i == 0 ? "" : ",").append("\"").append(TVS[i]).append("\":").append(TVS[i].isNeeded());
    }
    return out.append("}}").toString();
  }

  // ---------------------------------------------------------------------------------------------- script mode

  private String replay(String line) {
    List<Object> calls = (List<Object>) new Json(line).value();
    SearchArgument.Builder b = SearchArgumentFactory.newBuilder();
    try {
      for (Object o : calls) {
        List<Object> call = (List<Object>) o;
        String op = (String) call.get(0);
        switch (op) {
          case "startAnd": b.startAnd(); break;
          case "startOr": b.startOr(); break;
          case "startNot": b.startNot(); break;
          case "end": b.end(); break;
          case "literal": b.literal(TruthValue.valueOf((String) call.get(1))); break;
          default: {
            String col = (String) call.get(1);
            PredicateLeaf.Type type = PredicateLeaf.Type.valueOf((String) call.get(2));
            if (op.equals("isNull")) {
              apply(b, new Object[] {null, op, col, type});
            } else if (op.equals("in")) {
              List<Object> raw = (List<Object>) call.get(3);
              Object[] vals = new Object[raw.size()];
              for (int i = 0; i < vals.length; i++) {
                vals[i] = decode(type, raw.get(i));
              }
              apply(b, new Object[] {null, op, col, type, vals});
            } else if (op.equals("between")) {
              apply(b, new Object[] {null, op, col, type, decode(type, call.get(3)), decode(type, call.get(4))});
            } else {
              apply(b, new Object[] {null, op, col, type, decode(type, call.get(3))});
            }
          }
        }
      }
    } catch (RuntimeException e) {
      return "{\"script\":" + line + ",\"error\":" + Json.str(e.toString()) + "}";
    }
    String trimmed = line.trim();
    return answer(trimmed.substring(1, trimmed.length() - 1), b);
  }

  private static Object decode(PredicateLeaf.Type type, Object v) {
    if (v == null) {
      return null;
    }
    switch (type) {
      case LONG: return Long.valueOf((String) v);
      case FLOAT: return Double.longBitsToDouble(Long.parseLong((String) v));
      case STRING: return v;
      case DATE: return java.sql.Date.valueOf(LocalDate.parse((String) v));
      case DECIMAL: return new HiveDecimalWritable(HiveDecimal.create(new BigDecimal((String) v)));
      case TIMESTAMP: {
        List<Object> pair = (List<Object>) v;
        return java.sql.Timestamp.valueOf(LocalDateTime.ofEpochSecond(Long.parseLong((String) pair.get(0)),
            Integer.parseInt((String) pair.get(1)), ZoneOffset.UTC));
      }
      default: return v;
    }
  }

  /** Just enough JSON: writing ASCII-escaped strings, reading arrays/strings/numbers (as text)/true/false/null. */
  static final class Json {
    private final String s;
    private int i;

    Json(String s) {
      this.s = s;
    }

    static String str(String v) {
      StringBuilder b = new StringBuilder("\"");
      for (int k = 0; k < v.length(); k++) {
        char c = v.charAt(k);
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

    Object value() {
      while (Character.isWhitespace(s.charAt(i))) {
        i++;
      }
      char c = s.charAt(i);
      if (c == '[') {
        i++;
        List<Object> list = new ArrayList<>();
        skip();
        if (s.charAt(i) == ']') {
          i++;
          return list;
        }
        while (true) {
          list.add(value());
          skip();
          if (s.charAt(i++) == ']') {
            return list;
          }
        }
      }
      if (c == '"') {
        StringBuilder b = new StringBuilder();
        i++;
        while (s.charAt(i) != '"') {
          char d = s.charAt(i++);
          if (d == '\\') {
            char e = s.charAt(i++);
            switch (e) {
              case 'n': b.append('\n'); break;
              case 't': b.append('\t'); break;
              case 'r': b.append('\r'); break;
              case 'b': b.append('\b'); break;
              case 'f': b.append('\f'); break;
              case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
              default: b.append(e);
            }
          } else {
            b.append(d);
          }
        }
        i++;
        return b.toString();
      }
      int start = i;
      while (i < s.length() && ",] \t".indexOf(s.charAt(i)) < 0) {
        i++;
      }
      String word = s.substring(start, i);
      switch (word) {
        case "null": return null;
        case "true": return Boolean.TRUE;
        case "false": return Boolean.FALSE;
        default: return word;
      }
    }

    private void skip() {
      while (Character.isWhitespace(s.charAt(i))) {
        i++;
      }
    }
  }

  // ---------------------------------------------------------------------------------------------- main

  @SuppressWarnings("unchecked")
  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.US_ASCII);
    switch (args[0]) {
      case "truth":
        out.println(truthTables());
        break;
      case "random": {
        long seed = Long.parseLong(args[1]);
        int count = Integer.parseInt(args[2]);
        HiveSargOracle oracle = new HiveSargOracle(seed);
        for (int n = 0; n < count; n++) {
          String line = oracle.generate();
          while (line.length() > 60000) {  // keep the corpus small enough to parse quickly
            line = oracle.generate();
          }
          out.println(line);
        }
        break;
      }
      case "script": {
        HiveSargOracle oracle = new HiveSargOracle(0);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
          if (!line.isBlank()) {
            out.println(oracle.replay(line));
          }
        }
        break;
      }
      default:
        throw new IllegalArgumentException("mode: truth | random SEED COUNT | script");
    }
    out.flush();
  }
}
