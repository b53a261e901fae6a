"""sdnperf's P4Runtime controller (grpc.aio, protobufs from finsy): one process, one
connection per switch, apps l2-learning / topo-forwarding / proactive / runtime-json.
See controller.py for the configuration file and apps.py for the apps' behaviour."""
