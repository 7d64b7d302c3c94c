package io.hivebridge.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
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
import org.apache.spark.sql.sources.StringStartsWith;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import scala.Function1;
import scala.collection.Iterator;
import scala.collection.immutable.Map;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark's own parquet format, handed only the filters its parquet reader cannot lose a row with. Spark's reader
 * turns the pushed filters into parquet predicates that skip row groups (min/max, dictionaries, bloom filters),
 * pages (column indexes) and, with {@code spark.sql.parquet.recordLevelFilter.enabled}, rows; the Filter node
 * above the scan still evaluates every filter, so a filter left out here only skips less, never changes rows.
 *
 * <p>Kept: a filter whose every column is a top-level column of the relation typed boolean, byte, short, int,
 * long (every literal within the int range), string (UTF8_BINARY), binary or date. Left out:
 * <ul>
 *   <li>float and double: parquet's min/max ignore NaN and do not order -0.0 before 0.0, so {@code v = 'NaN'},
 *       {@code v > 100} and {@code v = 0.0} lose rows;</li>
 *   <li>a long literal outside the int range: a file written before a column was widened int -> bigint stores
 *       INT32, and Spark's parquet filters cast the literal with {@code intValue()} (2^32 + 5 becomes 5);</li>
 *   <li>decimals (a file written before a widening int -> decimal stores INT32/INT64 and the literal is cut the
 *       same way), timestamps (INT96, rebase modes, millisecond files), nested fields, collated strings and any
 *       other type: not proven safe here, so not pushed.</li>
 * </ul>
 */
public class SoundParquetFileFormat extends ParquetFileFormat {
  private static final long serialVersionUID = 1L;

  @Override
  public Function1<PartitionedFile, Iterator<InternalRow>> buildReaderWithPartitionValues(SparkSession session,
      StructType dataSchema, StructType partitionSchema, StructType requiredSchema, Seq<Filter> filters,
      Map<String, String> options, Configuration hadoopConf) {
    return super.buildReaderWithPartitionValues(session, dataSchema, partitionSchema, requiredSchema,
        sound(filters, dataSchema), options, hadoopConf);
  }

  /** The filters of {@code filters} that cannot lose a row in Spark's parquet reader over {@code schema}. */
  public static Seq<Filter> sound(Seq<Filter> filters, StructType schema) {
    List<Filter> kept = new ArrayList<>();
    for (Filter f : CollectionConverters.asJava(filters)) {
      if (safe(f, schema)) {
        kept.add(f);
      }
    }
    return CollectionConverters.asScala(kept).toList();
  }

  /** Whether Spark's parquet reader cannot lose a row with {@code f} over {@code schema}. */
  public static boolean safe(Filter f, StructType schema) {
    if (f instanceof And a) {
      return safe(a.left(), schema) && safe(a.right(), schema);
    }
    if (f instanceof Or o) {
      return safe(o.left(), schema) && safe(o.right(), schema);
    }
    if (f instanceof Not n) {
      return safe(n.child(), schema);
    }
    if (f instanceof IsNull n) {
      return column(n.attribute(), schema) != null;
    }
    if (f instanceof IsNotNull n) {
      return column(n.attribute(), schema) != null;
    }
    if (f instanceof EqualTo e) {
      return value(e.attribute(), e.value(), schema);
    }
    if (f instanceof EqualNullSafe e) {
      return value(e.attribute(), e.value(), schema);
    }
    if (f instanceof GreaterThan e) {
      return value(e.attribute(), e.value(), schema);
    }
    if (f instanceof GreaterThanOrEqual e) {
      return value(e.attribute(), e.value(), schema);
    }
    if (f instanceof LessThan e) {
      return value(e.attribute(), e.value(), schema);
    }
    if (f instanceof LessThanOrEqual e) {
      return value(e.attribute(), e.value(), schema);
    }
    if (f instanceof In in) {
      for (Object v : in.values()) {
        if (!value(in.attribute(), v, schema)) {
          return false;
        }
      }
      return column(in.attribute(), schema) != null;
    }
    if (f instanceof StringStartsWith s) {
      return column(s.attribute(), schema) instanceof StringType;
    }
    return false;
  }

  private static boolean value(String name, Object v, StructType schema) {
    DataType type = column(name, schema);
    if (type == null) {
      return false;
    }
    if (type instanceof LongType) {
      return v == null || (v instanceof Long l && l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE);
    }
    return true;
  }

  /** The type of a top-level column of a kept type (null for any other column, nested fields included). */
  private static DataType column(String name, StructType schema) {
    DataType found = null;
    int matches = 0;
    for (StructField field : schema.fields()) {
      if (field.name().toLowerCase(Locale.ROOT).equals(name.toLowerCase(Locale.ROOT))) {
        found = field.dataType();
        matches++;
      }
    }
    if (matches != 1) {
      return null;
    }
    boolean kept = found instanceof BooleanType || found instanceof ByteType || found instanceof ShortType
        || found instanceof IntegerType || found instanceof LongType || found instanceof BinaryType
        || found instanceof DateType
        || (found instanceof StringType s && s.equals(org.apache.spark.sql.types.DataTypes.StringType));
    return kept ? found : null;
  }
}
