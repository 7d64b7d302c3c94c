"""Hive itself as a test oracle: a Java program over pyspark's hive-storage-api jar and its Python driver."""
