package io.hivebridge.spark;

import java.util.HashMap;
import java.util.Map;

import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.sources.RelationProvider;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code spark.read.format("hudi-hive").load(path)} and {@code CREATE TABLE t USING hudi-hive LOCATION '...'}:
 * a Hudi table as Spark's own parquet file source, its files chosen per scan by {@link HudiHiveFileIndex}.
 */
public final class HudiHiveProvider implements RelationProvider, DataSourceRegister {
  public static final String SHORT_NAME = "hudi-hive";

  @Override
  public String shortName() {
    return SHORT_NAME;
  }

  @Override
  public BaseRelation createRelation(SQLContext context, scala.collection.immutable.Map<String, String> parameters) {
    Map<String, String> options = new HashMap<>(CollectionConverters.asJava(parameters));
    String path = options.get("path");
    if (path == null || path.isEmpty()) {
      throw new IllegalArgumentException("hudi-hive needs a path: spark.read.format('hudi-hive').load(path)");
    }
    SparkSession session = context.sparkSession();
    String tz = session.conf().get("spark.sql.session.timeZone");
    Protocol.Opened opened = Protocol.Opened.of(Planner.call(() -> "table " + path,
        Protocol.openRequest(options, tz)));
    return relation(session, opened.pin(), opened.root(), opened.dataSchema(), opened.partitionSchema(),
        opened.sizeInBytes(), tz);
  }

  /** The relation of a table the Python side opened (id, root, data and partition schemas as JSON). */
  public static HadoopFsRelation relation(SparkSession session, String id, String root, String dataSchema,
      String partitionSchema, long sizeInBytes, String timeZone) {
    StructType data = (StructType) DataType.fromJson(dataSchema);
    StructType partitions = (StructType) DataType.fromJson(partitionSchema);
    HudiHiveFileIndex index = new HudiHiveFileIndex(id, root, partitions, sizeInBytes, timeZone);
    return new HadoopFsRelation(index, partitions, data, Option.empty(), new SoundParquetFileFormat(),
        CollectionConverters.asScala(new HashMap<String, String>()).toMap(scala.$less$colon$less$.MODULE$.refl()),
        session);
  }
}
