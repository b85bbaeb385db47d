"""Layer 1: open files and URLs, stream Kineto JSON into Arrow batches, read Execution Traces."""
