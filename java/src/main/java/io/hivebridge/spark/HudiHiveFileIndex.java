package io.hivebridge.spark;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BasePredicate;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Predicate;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.execution.datasources.FileIndex;
import org.apache.spark.sql.execution.datasources.PartitionDirectory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

import scala.Option;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A Hudi table's file index whose {@link #listFiles} asks hive-bridge's Python planner which latest files the
 * scan's filters may match. The Python side pins the table state the relation was loaded at (one DataFrame reads
 * one table state) until {@link #refresh}. Partition filters are evaluated here, exactly, over each partition's
 * values (Spark does not apply them to rows again); data filters are translated to Spark's data source filters
 * and judged by the planner against column statistics, and Spark applies them to rows as usual.
 */
public final class HudiHiveFileIndex implements FileIndex {
  private final String id;
  private final Path root;
  private final StructType partitionSchema;
  private final long sizeInBytes;
  private final String timeZone;

  public HudiHiveFileIndex(String id, String root, StructType partitionSchema, long sizeInBytes,
      String timeZone) {
    this.id = id;
    this.root = new Path(root);
    this.partitionSchema = partitionSchema;
    this.sizeInBytes = sizeInBytes;
    this.timeZone = timeZone;
  }

  public String id() {
    return id;
  }

  @Override
  public Seq<Path> rootPaths() {
    return CollectionConverters.asScala(List.of(root)).toList();
  }

  @Override
  public Seq<PartitionDirectory> listFiles(Seq<Expression> partitionFilters, Seq<Expression> dataFilters) {
    List<Expression> all = new ArrayList<>(CollectionConverters.asJava(partitionFilters));
    all.addAll(CollectionConverters.asJava(dataFilters));
    StringBuilder json = new StringBuilder("[");
    for (Expression e : all) {
      // Spark's data source filter, or (for a part it cannot translate) a decimal or integer column cast to
      // double against a double literal (DoubleCasts); what neither reads is not used: it keeps every file
      String f = DoubleCasts.json(e);
      if (f != null) {
        if (json.length() > 1) {
          json.append(',');
        }
        json.append(f);
      }
    }
    json.append(']');
    // what a message names (the filters' SQL text is made only for a message)
    Supplier<String> what = () -> "table " + root + ", filters [" + String.join(" AND ",
        all.stream().map(Expression::sql).toList()) + "]";
    String[] lines = Planner.call(what, root.toUri().getPath(), Protocol.planRequest(id, statement(), json.toString()));
    List<PartitionDirectory> out = parse(lines, what);
    List<Expression> pf = CollectionConverters.asJava(partitionFilters);
    if (pf.isEmpty() || partitionSchema.fields().length == 0) {
      return CollectionConverters.asScala(out).toList();
    }
    BasePredicate predicate = partitionPredicate(pf);
    List<PartitionDirectory> kept = new ArrayList<>();
    for (PartitionDirectory d : out) {
      if (predicate.eval(d.values())) {
        kept.add(d);
      }
    }
    return CollectionConverters.asScala(kept).toList();
  }

  /** The partition filters bound to the partition values row, evaluated as Spark's own file indexes do. */
  private BasePredicate partitionPredicate(List<Expression> filters) {
    Expression all = filters.get(0);
    for (int i = 1; i < filters.size(); i++) {
      all = new And(all, filters.get(i));
    }
    List<org.apache.spark.sql.catalyst.expressions.AttributeReference> fresh =
        CollectionConverters.asJava(DataTypeUtils.toAttributes(partitionSchema));
    List<Attribute> input = new ArrayList<>();
    List<Attribute> refs = new ArrayList<>();
    scala.collection.Iterator<Attribute> it = all.references().iterator();
    while (it.hasNext()) {
      refs.add(it.next());
    }
    for (int i = 0; i < fresh.size(); i++) {
      Attribute chosen = fresh.get(i);
      for (Attribute r : refs) {
        if (r.name().equalsIgnoreCase(chosen.name())) {
          chosen = r;
          break;
        }
      }
      input.add(chosen);
    }
    BasePredicate p = Predicate.create(all, CollectionConverters.asScala(input).toList());
    p.initialize(0);
    return p;
  }

  /** The planner's answer to plan: partition lines (a partition's values) each followed by its file lines. */
  private List<PartitionDirectory> parse(String[] lines, Supplier<String> what) {
    List<PartitionDirectory> out = new ArrayList<>();
    InternalRow values = null;
    List<FileStatus> files = new ArrayList<>();
    StructField[] fields = partitionSchema.fields();
    for (int n = 1; n < lines.length; n++) {
      String line = lines[n];
      if (line.isEmpty()) {
        continue;
      }
      String[] cols = line.split(Protocol.SEP, -1);
      if (cols[0].equals(Protocol.PARTITION)) {
        if (values != null) {
          out.add(PartitionDirectory.apply(values, files.toArray(new FileStatus[0])));
        }
        files = new ArrayList<>();
        Object[] row = new Object[fields.length];
        String[] raw = Protocol.partitionValues(cols);
        for (int i = 0; i < fields.length; i++) {
          if (raw[i] == null) {
            row[i] = null;
            continue;
          }
          Literal lit = Literal.create(UTF8String.fromString(raw[i]), DataTypes.StringType);
          row[i] = new Cast(lit, fields[i].dataType(), Option.apply(timeZone)).eval(null);
        }
        values = new GenericInternalRow(row);
      } else if (cols[0].equals(Protocol.FILE_LINE)) {
        Path p;
        try {
          p = new Path(new URI(cols[1])); // a URI string: parsed as it is (Path(String) costs several times more)
        } catch (URISyntaxException e) {
          throw new IllegalArgumentException("hudi-hive: " + what.get() + ": a file location that is no URI: "
              + cols[1]);
        }
        files.add(new FileStatus(Long.parseLong(cols[2]), false, 1, 128L * 1024 * 1024, Long.parseLong(cols[3]),
            p));
      } else {
        throw new IllegalArgumentException("hudi-hive: " + what.get() + ": unexpected planner answer: " + line);
      }
    }
    if (values != null) {
      out.add(PartitionDirectory.apply(values, files.toArray(new FileStatus[0])));
    }
    return out;
  }

  /** The statement this thread runs (its Spark job group, which Spark's Thrift Server sets to the statement id). */
  private static String statement() {
    try {
      return org.apache.spark.SparkContext$.MODULE$.getOrCreate().getLocalProperty("spark.jobGroup.id");
    } catch (RuntimeException e) {
      return null;
    }
  }

  @Override
  public String[] inputFiles() {
    List<String> out = new ArrayList<>();
    Supplier<String> what = () -> "table " + root;
    for (PartitionDirectory d : parse(Planner.call(what, root.toUri().getPath(), Protocol.planRequest(id, "[]")), what)) {
      scala.collection.Iterator<org.apache.spark.sql.execution.datasources.FileStatusWithMetadata> it =
          d.files().iterator();
      while (it.hasNext()) {
        out.add(it.next().getPath().toString());
      }
    }
    return out.toArray(new String[0]);
  }

  @Override
  public void refresh() {
    Planner.call(() -> "refresh table " + root, root.toUri().getPath(), Protocol.refreshRequest(id));
  }

  @Override
  public long sizeInBytes() {
    return sizeInBytes;
  }

  @Override
  public StructType partitionSchema() {
    return partitionSchema;
  }

  @Override
  public String toString() {
    return "HudiHiveFileIndex(" + root + ")";
  }
}
