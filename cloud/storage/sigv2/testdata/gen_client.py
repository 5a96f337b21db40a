# Prints, as rows of botocoreClients in ../sigv2_test.go, requests
# botocore's own S3 client signs with Signature Version 2
# (signature_version "s3", and the presigner of a default client), with
# the example credentials and a fixed date; the last column is the
# canonicalized resource botocore signed. Unlike gen.py, the client
# computes that resource itself (its auth_path), quirks included:
# botocore 1.29 (Debian 12's python3-botocore) puts the operation's fixed
# query in it ("/legacy?list-type=2", "/legacy?acl?acl"). The rows were
# made with botocore 1.29.27 (/usr/bin/python3) and 1.43.11:
#   /usr/bin/python3 gen_client.py; python3 gen_client.py
import boto3, botocore, botocore.auth
from botocore.config import Config

ID, SECRET = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
DATE = "Tue, 27 Mar 2007 19:36:42 GMT"
EXPIRES = "1175139620"
botocore.auth.HmacV1Auth._get_date = lambda self: DATE
botocore.auth.HmacV1QueryAuth._get_date = lambda self: EXPIRES

signed = {}
orig = botocore.auth.HmacV1Auth.canonical_resource
def canonical_resource(self, *a, **k):
    signed["resource"] = orig(self, *a, **k)
    return signed["resource"]
botocore.auth.HmacV1Auth.canonical_resource = canonical_resource

class Sent(Exception):
    pass

def client(style, endpoint):
    s = boto3.session.Session(aws_access_key_id=ID, aws_secret_access_key=SECRET, region_name="us-east-1")
    c = s.client("s3", endpoint_url=endpoint, config=Config(signature_version="s3", s3={"addressing_style": style}))
    def send(request, **kw):
        signed["method"], signed["url"], signed["headers"] = request.method, request.url, request.headers
        raise Sent()
    c.meta.events.register("before-send", send)
    return c

B, K = "legacy", "dir/a b+c é.txt"
path = client("path", "http://127.0.0.1:9000")
virtual = client("virtual", "http://s3.example.com")
cases = [
    ("path", path, "list_objects_v2", dict(Bucket=B)),
    ("path", path, "list_objects_v2", dict(Bucket=B, Prefix="dir/", MaxKeys=5)),
    ("virtual", virtual, "list_objects_v2", dict(Bucket=B)),
    ("path", path, "list_objects", dict(Bucket=B)),
    ("path", path, "get_bucket_acl", dict(Bucket=B)),
    ("virtual", virtual, "get_bucket_acl", dict(Bucket=B)),
    ("path", path, "create_multipart_upload", dict(Bucket=B, Key=K)),
    ("path", path, "get_object_acl", dict(Bucket=B, Key=K, VersionId="v1")),
    ("path", path, "get_object_retention", dict(Bucket=B, Key=K)),
    ("virtual", virtual, "get_bucket_encryption", dict(Bucket=B)),
    ("path", path, "get_object_lock_configuration", dict(Bucket=B)),
    ("path", path, "select_object_content", dict(Bucket=B, Key="k.csv", Expression="select * from s3object", ExpressionType="SQL",
                                                  InputSerialization={"CSV": {}}, OutputSerialization={"CSV": {}})),
]
ver = botocore.__version__
for style, c, op, kw in cases:
    try:
        getattr(c, op)(**kw)
    except Sent:
        pass
    h = signed["headers"]
    keep = [(k, v if isinstance(v, str) else v.decode()) for k, v in h.items()
            if k.lower() in ("date", "authorization", "content-type", "content-md5") or k.lower().startswith("x-amz-")]
    args = ", ".join(f'{k!r}: {v!r}'.replace("'", '"') for k, v in keep)
    bucket = B if style == "virtual" else ""
    extra = f" {kw['Prefix']!r}" if "Prefix" in kw else ""
    print(f'\t{{"botocore {ver} {op}{extra.replace(chr(39), "")} {style}", "{signed["method"]}", "{signed["url"]}", "{bucket}", map[string]string{{{args}}}, "{signed["resource"]}"}},')
# Presigned: the query signer of a client of the default signer.
s = boto3.session.Session(aws_access_key_id=ID, aws_secret_access_key=SECRET, region_name="us-east-1")
d = s.client("s3", endpoint_url="http://127.0.0.1:9000", config=Config(s3={"addressing_style": "path"}))
for op, kw in [("list_objects_v2", dict(Bucket=B)), ("get_object_acl", dict(Bucket=B, Key=K))]:
    signed.clear()
    u = d.generate_presigned_url(op, Params=kw, ExpiresIn=3600)
    print(f'\t{{"botocore {ver} presigned {op}", "GET", "{u}", "", nil, "{signed.get("resource")}"}},')
