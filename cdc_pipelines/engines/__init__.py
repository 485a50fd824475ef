"""The engines that run the stages' rules: `local` (this process, pyarrow and delta-rs, no JVM) and `spark`
(the same rule functions in Spark's tasks; Delta through Spark, any Hadoop storage, a cluster), and the one
table (`choice`) that says which engine serves a step."""
