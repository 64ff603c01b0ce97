"""Positioned syntax trees of the languages CI files are written in: YAML (`yamlpos`), shell (`shell`), Python
(`pysource`) and Dockerfiles (`dockerfile`), the comments that anchor to them (`anchors`), and line diffs. Each
parser keeps every position, so that the layers above speak of structure and still point at exact spans."""
