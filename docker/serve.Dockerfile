# hive-bridge serve: a HiveServer2 endpoint (Spark's Thrift Server in a PySpark driver) over the Hudi tables the
# stack's Hive 4 metastore holds. Built from the repository's root (docker-compose.yml: build context "..").
FROM python:3.11-slim-bookworm

# Java 17 with javac: the hudi-hive file index's jar is compiled from java/ against pyspark's jars
RUN apt-get update \
    && apt-get install -y --no-install-recommends openjdk-17-jdk-headless procps \
    && rm -rf /var/lib/apt/lists/*
ENV PYTHONUNBUFFERED=1 \
    HIVE_BRIDGE_SCAN_REPORTS=/var/log/hive-bridge

WORKDIR /opt/hive-bridge
COPY setup.cfg pyproject.toml README.md pyspark_hudi_hive.py ./
COPY sarg ./sarg
COPY hive_bridge ./hive_bridge
COPY java ./java
RUN pip install --no-cache-dir . \
    && useradd --create-home --uid 1001 hive-bridge \
    && mkdir -p /var/log/hive-bridge && chown hive-bridge /var/log/hive-bridge
USER hive-bridge
# the jar built once into the user's cache, not at the first start
RUN python -m hive_bridge.spark.jar

EXPOSE 10010
ENTRYPOINT ["hive-bridge"]
CMD ["serve", "--help"]
