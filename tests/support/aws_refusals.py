"""An AWS session on the embedded AWS whose one EC2 operation is refused (403 UnauthorizedOperation), as
IAM answers a role that lacks the permission."""

from __future__ import annotations

from botocore.awsrequest import AWSResponse

from karpenter_gitops.adapters.aws.throttling import _RawBody

DENIED = (
    b"<Response><Errors><Error><Code>UnauthorizedOperation</Code><Message>You are not authorized to perform"
    b" this operation.</Message></Error></Errors><RequestID>x</RequestID></Response>"
)


def session_denying(aws, operation: str):
    """A session of ``aws`` (an EmbeddedAWS) on which EC2 ``operation`` is refused and every other call answered."""

    def refuse(request, event_name, **_):
        if event_name.endswith(f".{operation}"):
            return AWSResponse(request.url, 403, {"Content-Type": "text/xml"}, _RawBody(DENIED))
        return None

    session = aws.session()
    session.register("before-send.ec2", refuse)
    return session
