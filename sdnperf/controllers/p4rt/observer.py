"""A read-only look at a P4Runtime switch for the lab: has some controller given it a
pipeline? Used as readiness for controllers that are not ours (they write no state file).

GetForwardingPipelineConfig needs no arbitration and takes no part in the election, so it
never disturbs the controller under test (a stream, even with a low election id, would)."""

from __future__ import annotations

import grpc
from finsy.proto import p4r, p4r_grpc


def has_pipeline(address: str, device_id: int, timeout: float = 2.0) -> bool:
    """True when the switch at `address` reports a P4Info (a SetForwardingPipelineConfig,
    which only a primary controller may send, has succeeded). Our switch answers an empty
    config before that; BMv2 answers FAILED_PRECONDITION."""
    with grpc.insecure_channel(address) as channel:
        stub = p4r_grpc.P4RuntimeStub(channel)
        try:
            reply = stub.GetForwardingPipelineConfig(
                p4r.GetForwardingPipelineConfigRequest(
                    device_id=device_id,
                    response_type=p4r.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE,
                ),
                timeout=timeout,
            )
        except grpc.RpcError:
            return False
    return reply.config.HasField("p4info") and bool(
        reply.config.p4info.tables or reply.config.p4info.actions
    )
