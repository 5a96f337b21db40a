"""boto3 against the S3 endpoint, feature by feature, as a new user would.

Usage: python3 boto3_interop.py ENDPOINT PREFIX
with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY of a readwrite key in the
environment. Every feature runs on its own buckets (named PREFIX-...), so
one failure does not hide the others; each prints "ok NAME" or "FAIL NAME:
why", warnings included, and the exit status is 1 when any failed. Works
with Debian's boto3 1.26 and with current boto3 (1.4x).
"""

import base64
import datetime
import email.header
import hashlib
import io
import json
import os
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
import uuid
import warnings
import zlib

import boto3
import botocore
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError

URL, PREFIX = sys.argv[1], sys.argv[2]
BOTO = tuple(int(x) for x in botocore.__version__.split(".")[:2])
MiB = 1 << 20

session = boto3.session.Session(region_name="us-east-1")
s3 = session.client("s3", endpoint_url=URL, config=Config(s3={"addressing_style": "path"}))
s3v4 = session.client("s3", endpoint_url=URL, config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
default_client = session.client("s3", endpoint_url=URL)

failures = []


def feature(fn):
    name = fn.__name__
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            failures.append(name)
            print("FAIL %s: %s\n%s" % (name, e, traceback.format_exc()), flush=True)
        else:
            print("ok %s" % name, flush=True)
        for w in caught:
            print("WARNING in %s: %s" % (name, w.message), flush=True)
    return fn


def eq(got, want, what):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what, got, want))


def code(fn, *a, **kw):
    """The error code and HTTP status fn raises, or None."""
    try:
        fn(*a, **kw)
    except ClientError as e:
        return e.response["Error"].get("Code"), e.response["ResponseMetadata"]["HTTPStatusCode"]
    return None


def bucket(name):
    b = "%s-%s" % (PREFIX, name)
    s3.create_bucket(Bucket=b)
    return b


def empty(b):
    """Deletes every version of every key in b, and b."""
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=b):
        objs = [{"Key": v["Key"], "VersionId": v["VersionId"]} for v in page.get("Versions", []) + page.get("DeleteMarkers", [])]
        if objs:
            s3.delete_objects(Bucket=b, Delete={"Objects": objs, "Quiet": True})
    s3.delete_bucket(Bucket=b)


def http(method, url, body=None, headers=None):
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def rand(n, seed):
    out = bytearray()
    h = hashlib.sha256(seed.encode()).digest()
    while len(out) < n:
        h = hashlib.sha256(h).digest()
        out += h * 64
    return bytes(out[:n])


def add_header(client, event, name, value):
    """Adds a header to every request of event (for options an old boto3 lacks)."""
    def hook(request, **_):
        request.headers[name] = value
    client.meta.events.register("before-sign.s3." + event, hook)
    return lambda: client.meta.events.unregister("before-sign.s3." + event, hook)


@feature
def buckets():
    b = bucket("buckets")
    eq(code(s3.create_bucket, Bucket=b), ("BucketAlreadyOwnedByYou", 409), "create again")
    s3.head_bucket(Bucket=b)
    names = [x["Name"] for x in s3.list_buckets()["Buckets"]]
    assert b in names, names
    eq(s3.get_bucket_location(Bucket=b).get("LocationConstraint"), None, "location")
    eq(code(s3.head_bucket, Bucket=b + "-missing"), ("404", 404), "head missing")
    s3.delete_bucket(Bucket=b)
    eq(code(s3.head_bucket, Bucket=b), ("404", 404), "head deleted")


@feature
def objects_and_listings():
    b = bucket("objects")
    s3.put_object(Bucket=b, Key="a b+c/é.txt", Body=b"hello", ContentType="text/plain",
                  Metadata={"Color": "blue"}, CacheControl="max-age=60", ContentDisposition="inline")
    h = s3.head_object(Bucket=b, Key="a b+c/é.txt")
    eq(h["ContentLength"], 5, "length")
    eq(h["ContentType"], "text/plain", "type")
    eq(h["Metadata"], {"color": "blue"}, "metadata")
    eq(h["CacheControl"], "max-age=60", "cache-control")
    eq(h["ETag"], '"%s"' % hashlib.md5(b"hello").hexdigest(), "etag")
    g = s3.get_object(Bucket=b, Key="a b+c/é.txt", Range="bytes=1-3")
    eq(g["Body"].read(), b"ell", "range")
    eq(g["ContentRange"], "bytes 1-3/5", "content-range")
    eq(code(s3.get_object, Bucket=b, Key="nope"), ("NoSuchKey", 404), "missing key")
    for i in range(7):
        s3.put_object(Bucket=b, Key="dir%d/f%d" % (i % 3, i), Body=b"x")
    s3.put_object(Bucket=b, Key="top", Body=b"")
    # v2 with a delimiter, two entries a page
    keys, prefixes, pages = [], [], 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=b, Delimiter="/", PaginationConfig={"PageSize": 2}):
        pages += 1
        keys += [o["Key"] for o in page.get("Contents", [])]
        prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
    eq(keys, ["top"], "v2 keys")
    eq(prefixes, ["a b+c/", "dir0/", "dir1/", "dir2/"], "v2 prefixes")
    assert pages >= 3, pages
    # v1, paged by marker, no delimiter
    keys = []
    for page in s3.get_paginator("list_objects").paginate(Bucket=b, PaginationConfig={"PageSize": 3}):
        keys += [o["Key"] for o in page.get("Contents", [])]
    eq(len(keys), 9, "v1 count")
    eq(keys, sorted(keys), "v1 order")
    # v1 with a delimiter, paged: NextMarker
    keys, prefixes = [], []
    for page in s3.get_paginator("list_objects").paginate(Bucket=b, Delimiter="/", PaginationConfig={"PageSize": 2}):
        keys += [o["Key"] for o in page.get("Contents", [])]
        prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
    eq(keys, ["top"], "v1 delimited keys")
    eq(prefixes, ["a b+c/", "dir0/", "dir1/", "dir2/"], "v1 prefixes")
    r = s3.list_objects_v2(Bucket=b, Prefix="dir1/", StartAfter="dir1/f1", FetchOwner=True)
    eq([o["Key"] for o in r["Contents"]], ["dir1/f4"], "start-after")
    assert "Owner" in r["Contents"][0], r["Contents"][0]
    # deletes
    # metadata past US-ASCII: boto3 refuses it in Metadata, so a hook sends
    # the header (ISO-8859-1 bytes, as http.client encodes it); it comes
    # back as S3 encodes it, RFC 2047 words of its UTF-8
    undo = add_header(s3, "PutObject", "x-amz-meta-greeting", "Hello World\xe9")
    try:
        s3.put_object(Bucket=b, Key="unicode-meta", Body=b"x")
    finally:
        undo()
    got = s3.head_object(Bucket=b, Key="unicode-meta")["Metadata"]["greeting"]
    eq(got, "=?UTF-8?B?SGVsbG8gV29ybGTDqQ==?=", "unicode metadata as S3 sends it")
    eq(str(email.header.make_header(email.header.decode_header(got))), "Hello World\xe9", "unicode metadata decoded")
    s3.delete_object(Bucket=b, Key="unicode-meta")
    s3.delete_object(Bucket=b, Key="top")
    s3.delete_object(Bucket=b, Key="never-was")
    r = s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "dir0/f0"}, {"Key": "dir0/f3"}, {"Key": "ghost"}]})
    eq(sorted(d["Key"] for d in r["Deleted"]), ["dir0/f0", "dir0/f3", "ghost"], "deleted")
    eq(r.get("Errors", []), [], "delete errors")
    r = s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "dir1/f1"}], "Quiet": True})
    eq(r.get("Deleted", []), [], "quiet")
    eq(s3.list_objects_v2(Bucket=b)["KeyCount"], 5, "left")
    empty(b)


@feature
def multipart_transfer():
    b = bucket("multipart")
    body = rand(17 * MiB + 123, "mp")
    cfg = TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB, max_concurrency=4)
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "src"), os.path.join(d, "dst")
        with open(src, "wb") as f:
            f.write(body)
        s3.upload_file(src, b, "big", Config=cfg, ExtraArgs={"ContentType": "video/mp4", "Metadata": {"k": "v"}})
        h = s3.head_object(Bucket=b, Key="big")
        assert h["ETag"].endswith('-4"'), h["ETag"]
        eq(h["ContentType"], "video/mp4", "type")
        eq(h["Metadata"], {"k": "v"}, "metadata")
        s3.download_file(b, "big", dst, Config=cfg)
        with open(dst, "rb") as f:
            eq(hashlib.md5(f.read()).hexdigest(), hashlib.md5(body).hexdigest(), "downloaded")
        # upload_fileobj / download_fileobj
        s3.upload_fileobj(io.BytesIO(body[:11 * MiB]), b, "fileobj", Config=cfg)
        out = io.BytesIO()
        s3.download_fileobj(b, "fileobj", out, Config=cfg)
        eq(out.getvalue() == body[:11 * MiB], True, "fileobj round trip")
    # low-level: list parts and uploads, abort
    up = s3.create_multipart_upload(Bucket=b, Key="aborted")["UploadId"]
    s3.upload_part(Bucket=b, Key="aborted", UploadId=up, PartNumber=1, Body=b"x" * 10)
    eq([u["Key"] for u in s3.list_multipart_uploads(Bucket=b).get("Uploads", [])], ["aborted"], "uploads")
    eq([p["PartNumber"] for p in s3.list_parts(Bucket=b, Key="aborted", UploadId=up)["Parts"]], [1], "parts")
    s3.abort_multipart_upload(Bucket=b, Key="aborted", UploadId=up)
    eq(s3.list_multipart_uploads(Bucket=b).get("Uploads", []), [], "uploads after abort")
    empty(b)


@feature
def copies():
    a, b = bucket("copy-src"), bucket("copy-dst")
    body = rand(12 * MiB + 7, "copy")
    s3.put_object(Bucket=a, Key="big", Body=body, ContentType="image/png", Metadata={"m": "1"})
    cfg = TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB)
    # s3transfer's multipart copy does not carry the source's content type
    # and metadata (against S3 too): they are given in ExtraArgs.
    s3.copy({"Bucket": a, "Key": "big"}, b, "big", Config=cfg, ExtraArgs={"ContentType": "image/png", "Metadata": {"m": "1"}})
    h = s3.head_object(Bucket=b, Key="big")
    assert h["ETag"].endswith('-3"'), h["ETag"]
    eq(h["ContentLength"], len(body), "size")
    eq(h["ContentType"], "image/png", "managed copy's type")
    eq(h["Metadata"], {"m": "1"}, "managed copy's metadata")
    eq(hashlib.md5(s3.get_object(Bucket=b, Key="big")["Body"].read()).hexdigest(), hashlib.md5(body).hexdigest(), "copied body")
    s3.put_object(Bucket=a, Key="small", Body=b"small", ContentType="text/plain", Metadata={"m": "1"})
    s3.copy_object(Bucket=b, Key="c1", CopySource={"Bucket": a, "Key": "small"})
    h = s3.head_object(Bucket=b, Key="c1")
    eq((h["ContentType"], h["Metadata"]), ("text/plain", {"m": "1"}), "COPY directive")
    s3.copy_object(Bucket=b, Key="c2", CopySource="%s/small" % a, MetadataDirective="REPLACE",
                   ContentType="text/csv", Metadata={"n": "2"})
    h = s3.head_object(Bucket=b, Key="c2")
    eq((h["ContentType"], h["Metadata"]), ("text/csv", {"n": "2"}), "REPLACE directive")
    # onto itself: needs REPLACE
    eq(code(s3.copy_object, Bucket=a, Key="small", CopySource={"Bucket": a, "Key": "small"})[1], 400, "self copy without REPLACE")
    s3.copy_object(Bucket=a, Key="small", CopySource={"Bucket": a, "Key": "small"}, MetadataDirective="REPLACE", Metadata={"x": "y"})
    eq(s3.head_object(Bucket=a, Key="small")["Metadata"], {"x": "y"}, "self copy REPLACE")
    eq(code(s3.copy_object, Bucket=b, Key="c3", CopySource={"Bucket": a, "Key": "small"}, CopySourceIfMatch='"nope"'),
       ("PreconditionFailed", 412), "copy-source-if-match")
    if "IfNoneMatch" in s3.meta.service_model.operation_model("CopyObject").input_shape.members:
        # conditional writes on the destination (boto3 1.3x and later)
        eq(code(s3.copy_object, Bucket=b, Key="c1", CopySource={"Bucket": a, "Key": "small"}, IfNoneMatch="*"),
           ("PreconditionFailed", 412), "copy If-None-Match onto an object")
        s3.copy_object(Bucket=b, Key="c4", CopySource={"Bucket": a, "Key": "small"}, IfNoneMatch="*")
    empty(a)
    empty(b)


@feature
def presigned_urls():
    b = bucket("presign")
    s3.put_object(Bucket=b, Key="k", Body=b"presigned body")
    # boto3's default client against a custom endpoint
    u = default_client.generate_presigned_url("get_object", Params={"Bucket": b, "Key": "k"}, ExpiresIn=300)
    print("  default presign:", "v2" if "AWSAccessKeyId=" in u else "v4" if "X-Amz-Signature=" in u else u, flush=True)
    st, _, data = http("GET", u)
    eq((st, data), (200, b"presigned body"), "default presigned GET")
    u = default_client.generate_presigned_url("put_object", Params={"Bucket": b, "Key": "dflt", "ContentType": "text/csv", "Metadata": {"o": "p"}})
    st, _, data = http("PUT", u, b"a,b\n", {"Content-Type": "text/csv", "x-amz-meta-o": "p"} if "X-Amz-Signature=" in u else {"Content-Type": "text/csv"})
    eq(st, 200, "default presigned PUT: %r" % data)
    h = s3.head_object(Bucket=b, Key="dflt")
    eq((h["ContentType"], h["Metadata"]), ("text/csv", {"o": "p"}), "default presigned PUT stored")
    # Signature V4, both addressing styles
    for style in ("path", "virtual"):
        c = session.client("s3", endpoint_url=URL, config=Config(signature_version="s3v4", s3={"addressing_style": style}))
        u = c.generate_presigned_url("get_object", Params={"Bucket": b, "Key": "k", "ResponseContentType": "x/y"}, ExpiresIn=60)
        assert "X-Amz-Signature=" in u, u
        if style == "virtual" and ".localhost" not in u:
            continue
        try:
            st, hd, data = http("GET", u)
        except urllib.error.URLError as e:  # *.localhost may not resolve here
            print("  (virtual-hosted presign not resolvable: %s)" % e, flush=True)
            continue
        eq((st, data), (200, b"presigned body"), "v4 presigned GET " + style)
        eq(hd.get("Content-Type"), "x/y", "response-content-type")
    u = s3v4.generate_presigned_url("put_object", Params={"Bucket": b, "Key": "v4", "ContentType": "text/csv", "Metadata": {"o": "q"}})
    st, _, data = http("PUT", u, b"1,2\n", {"Content-Type": "text/csv", "x-amz-meta-o": "q"})
    eq(st, 200, "v4 presigned PUT: %r" % data)
    h = s3.head_object(Bucket=b, Key="v4")
    eq((h["ContentType"], h["Metadata"]), ("text/csv", {"o": "q"}), "v4 presigned PUT stored")
    # changed after signing
    st, _, data = http("GET", s3v4.generate_presigned_url("get_object", Params={"Bucket": b, "Key": "k"}).replace("/k?", "/v4?"))
    eq(st, 403, "tampered URL")
    u = s3v4.generate_presigned_url("get_object", Params={"Bucket": b, "Key": "k"}, ExpiresIn=1)
    time.sleep(2)
    st, _, data = http("GET", u)
    eq(st, 403, "expired URL")
    assert b"expired" in data, data
    empty(b)


def multipart_form(fields, file_field, filename, content, content_type):
    boundary = "----boto3interop" + uuid.uuid4().hex
    out = io.BytesIO()
    for k, v in fields.items():
        out.write(("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n" % (boundary, k, v)).encode())
    out.write(("--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\nContent-Type: %s\r\n\r\n"
               % (boundary, file_field, filename, content_type)).encode())
    out.write(content)
    out.write(("\r\n--%s--\r\n" % boundary).encode())
    return out.getvalue(), "multipart/form-data; boundary=" + boundary


@feature
def presigned_post():
    b = bucket("post")
    for name, c in (("default", default_client), ("s3v4", s3v4)):
        p = c.generate_presigned_post(b, "uploads/${filename}",
                                      Fields={"Content-Type": "text/plain", "x-amz-meta-who": "form", "success_action_status": "201"},
                                      Conditions=[{"Content-Type": "text/plain"}, {"x-amz-meta-who": "form"}, ["starts-with", "$key", "uploads/"],
                                                  {"success_action_status": "201"}, ["content-length-range", 1, 1024]],
                                      ExpiresIn=300)
        body, ctype = multipart_form(p["fields"], "file", name + ".txt", b"posted " + name.encode(), "text/plain")
        st, hd, data = http("POST", p["url"], body, {"Content-Type": ctype})
        eq(st, 201, "%s POST: %r" % (name, data))
        assert b"<Key>uploads/%s.txt</Key>" % name.encode() in data, data
        h = s3.head_object(Bucket=b, Key="uploads/%s.txt" % name)
        eq((h["ContentType"], h["Metadata"]), ("text/plain", {"who": "form"}), name + " stored")
        # too big for the policy
        body, ctype = multipart_form(p["fields"], "file", "big.txt", b"x" * 2000, "text/plain")
        st, _, data = http("POST", p["url"], body, {"Content-Type": ctype})
        eq(st, 400, "%s POST over the range: %r" % (name, data))
    empty(b)


@feature
def checksums():
    b = bucket("checksums")
    body = b"checksummed body"
    algs = ["SHA256", "SHA1", "CRC32"]
    try:
        import awscrt  # noqa: F401  (botocore needs it for CRC32C and CRC64NVME)
        algs.append("CRC32C")
    except ImportError:
        print("  (no awscrt: CRC32C skipped)", flush=True)
    for alg in algs:
        r = s3.put_object(Bucket=b, Key=alg, Body=body, ChecksumAlgorithm=alg)
        assert r.get("Checksum" + alg), (alg, r)
        g = s3.get_object(Bucket=b, Key=alg, ChecksumMode="ENABLED")
        eq(g["Body"].read(), body, alg + " body")  # botocore checks the checksum as it reads
        eq(g.get("Checksum" + alg), r["Checksum" + alg], alg + " returned")
        h = s3.head_object(Bucket=b, Key=alg, ChecksumMode="ENABLED")
        eq(h.get("Checksum" + alg), r["Checksum" + alg], alg + " head")
    want = base64.b64encode(hashlib.sha256(body).digest()).decode()
    eq(s3.head_object(Bucket=b, Key="SHA256", ChecksumMode="ENABLED")["ChecksumSHA256"], want, "sha256 value")
    bad = base64.b64encode(hashlib.sha256(b"other").digest()).decode()
    eq(code(s3.put_object, Bucket=b, Key="bad", Body=body, ChecksumSHA256=bad), ("BadDigest", 400), "wrong checksum")
    eq(code(s3.put_object, Bucket=b, Key="bad", Body=body, ChecksumSHA256="ZGVhZA=="), ("InvalidRequest", 400), "not a sha256")
    # multipart with checksums
    up = s3.create_multipart_upload(Bucket=b, Key="mp", ChecksumAlgorithm="SHA256")["UploadId"]
    p1 = s3.upload_part(Bucket=b, Key="mp", UploadId=up, PartNumber=1, Body=b"a" * (5 * MiB), ChecksumAlgorithm="SHA256")
    p2 = s3.upload_part(Bucket=b, Key="mp", UploadId=up, PartNumber=2, Body=b"b" * 10, ChecksumAlgorithm="SHA256")
    s3.complete_multipart_upload(Bucket=b, Key="mp", UploadId=up, MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": p1["ETag"], "ChecksumSHA256": p1["ChecksumSHA256"]},
        {"PartNumber": 2, "ETag": p2["ETag"], "ChecksumSHA256": p2["ChecksumSHA256"]}]})
    g = s3.get_object(Bucket=b, Key="mp", ChecksumMode="ENABLED")
    eq(len(g["Body"].read()), 5 * MiB + 10, "mp body")
    g = s3.get_object(Bucket=b, Key="mp", ChecksumMode="ENABLED", PartNumber=2)
    eq(g["Body"].read(), b"b" * 10, "part 2")
    eq(g.get("ChecksumSHA256"), p2["ChecksumSHA256"], "part 2 checksum")
    empty(b)


@feature
def versioning():
    b = bucket("versions")
    eq(s3.get_bucket_versioning(Bucket=b).get("Status"), None, "never versioned")
    s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Enabled"})
    eq(s3.get_bucket_versioning(Bucket=b)["Status"], "Enabled", "enabled")
    ids = [s3.put_object(Bucket=b, Key="k", Body=b"v%d" % i)["VersionId"] for i in range(5)]
    assert len(set(ids)) == 5, ids
    eq(s3.get_object(Bucket=b, Key="k", VersionId=ids[1])["Body"].read(), b"v1", "get by id")
    eq(s3.head_object(Bucket=b, Key="k", VersionId=ids[2])["VersionId"], ids[2], "head by id")
    d = s3.delete_object(Bucket=b, Key="k")
    eq(d.get("DeleteMarker"), True, "delete marker")
    marker = d["VersionId"]
    eq(code(s3.get_object, Bucket=b, Key="k"), ("NoSuchKey", 404), "get after marker")
    eq(code(s3.head_object, Bucket=b, Key="k", VersionId=marker), ("405", 405), "head marker")
    s3.put_object(Bucket=b, Key="other", Body=b"o")
    vs, dms, pages = [], [], 0
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=b, PaginationConfig={"PageSize": 2}):
        pages += 1
        vs += [(v["Key"], v["VersionId"], v["IsLatest"]) for v in page.get("Versions", [])]
        dms += [(m["Key"], m["VersionId"], m["IsLatest"]) for m in page.get("DeleteMarkers", [])]
    eq(len(vs), 6, "versions")
    eq(dms, [("k", marker, True)], "markers")
    eq([v[1] for v in vs if v[0] == "k"], ids[::-1], "newest first")
    assert pages >= 3, pages
    s3.delete_object(Bucket=b, Key="k", VersionId=marker)
    eq(s3.get_object(Bucket=b, Key="k")["Body"].read(), b"v4", "back after the marker goes")
    s3.delete_object(Bucket=b, Key="k", VersionId=ids[4])
    eq(s3.get_object(Bucket=b, Key="k")["Body"].read(), b"v3", "older version current")
    r = s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "k", "VersionId": ids[0]}, {"Key": "other"}]})
    got = {(x["Key"], x.get("VersionId"), x.get("DeleteMarker")) for x in r["Deleted"]}
    assert ("k", ids[0], None) in got or ("k", ids[0], False) in got, got
    assert any(x["Key"] == "other" and x.get("DeleteMarker") for x in r["Deleted"]), r["Deleted"]
    s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Suspended"})
    eq(s3.put_object(Bucket=b, Key="s", Body=b"x").get("VersionId"), "null", "suspended")
    # tagging by version
    s3.put_object_tagging(Bucket=b, Key="k", VersionId=ids[1], Tagging={"TagSet": [{"Key": "v", "Value": "1"}]})
    eq(s3.get_object_tagging(Bucket=b, Key="k", VersionId=ids[1])["TagSet"], [{"Key": "v", "Value": "1"}], "version tags")
    eq(s3.get_object_tagging(Bucket=b, Key="k")["TagSet"], [], "current version untagged")
    s3.delete_object_tagging(Bucket=b, Key="k", VersionId=ids[1])
    eq(s3.get_object_tagging(Bucket=b, Key="k", VersionId=ids[1])["TagSet"], [], "version tags deleted")
    empty(b)


SSE_KEY = bytes(range(32))


@feature
def encryption():
    b = bucket("sse")
    r = s3.put_object(Bucket=b, Key="s3", Body=b"secret", ServerSideEncryption="AES256")
    eq(r.get("ServerSideEncryption"), "AES256", "put SSE-S3")
    g = s3.get_object(Bucket=b, Key="s3")
    eq((g["Body"].read(), g.get("ServerSideEncryption")), (b"secret", "AES256"), "get SSE-S3")
    # SSE-C: boto3 base64-encodes the key and adds its MD5
    r = s3.put_object(Bucket=b, Key="c", Body=b"customer", SSECustomerAlgorithm="AES256", SSECustomerKey=SSE_KEY)
    eq(r.get("SSECustomerAlgorithm"), "AES256", "put SSE-C")
    eq(s3.get_object(Bucket=b, Key="c", SSECustomerAlgorithm="AES256", SSECustomerKey=SSE_KEY)["Body"].read(), b"customer", "get SSE-C")
    eq(s3.head_object(Bucket=b, Key="c", SSECustomerAlgorithm="AES256", SSECustomerKey=SSE_KEY)["ContentLength"], 8, "head SSE-C")
    eq(code(s3.get_object, Bucket=b, Key="c")[1], 400, "SSE-C without the key")
    eq(code(s3.get_object, Bucket=b, Key="c", SSECustomerAlgorithm="AES256", SSECustomerKey=bytes(32))[1], 403, "another key")
    # multipart SSE-C with the transfer manager, and a copy of it
    cfg = TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB)
    body = rand(11 * MiB, "ssec")
    extra = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": SSE_KEY}
    s3.upload_fileobj(io.BytesIO(body), b, "cbig", Config=cfg, ExtraArgs=extra)
    out = io.BytesIO()
    s3.download_fileobj(b, "cbig", out, Config=cfg, ExtraArgs=extra)
    eq(out.getvalue() == body, True, "SSE-C multipart round trip")
    s3.copy({"Bucket": b, "Key": "cbig"}, b, "cbig-copy", Config=cfg,
            ExtraArgs={"CopySourceSSECustomerAlgorithm": "AES256", "CopySourceSSECustomerKey": SSE_KEY, "ServerSideEncryption": "AES256"})
    eq(s3.head_object(Bucket=b, Key="cbig-copy").get("ServerSideEncryption"), "AES256", "SSE-C to SSE-S3 copy")
    # bucket default
    eq(code(s3.get_bucket_encryption, Bucket=b), ("ServerSideEncryptionConfigurationNotFoundError", 404), "no default")
    s3.put_bucket_encryption(Bucket=b, ServerSideEncryptionConfiguration={"Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
    eq(s3.get_bucket_encryption(Bucket=b)["ServerSideEncryptionConfiguration"]["Rules"][0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"], "AES256", "default")
    eq(s3.put_object(Bucket=b, Key="d", Body=b"d").get("ServerSideEncryption"), "AES256", "by default")
    s3.delete_bucket_encryption(Bucket=b)
    put = s3.put_object(Bucket=b, Key="kms", Body=b"k", ServerSideEncryption="aws:kms")
    eq((put.get("ServerSideEncryption"), put.get("SSEKMSKeyId", "").startswith("arn:aws:kms:")), ("aws:kms", True), "kms under the default key")
    eq(s3.get_object(Bucket=b, Key="kms")["Body"].read(), b"k", "kms round trip")
    put = s3.put_object(Bucket=b, Key="dsse", Body=b"two", ServerSideEncryption="aws:kms:dsse", BucketKeyEnabled=True)
    eq((put.get("ServerSideEncryption"), put.get("SSEKMSKeyId", "").startswith("arn:aws:kms:"), "BucketKeyEnabled" in put),
       ("aws:kms:dsse", True, False), "dual-layer kms, no bucket key")
    got = s3.get_object(Bucket=b, Key="dsse")
    eq((got.get("ServerSideEncryption"), got["Body"].read()), ("aws:kms:dsse", b"two"), "dual-layer kms round trip")
    empty(b)


@feature
def lifecycle():
    b = bucket("lifecycle")
    eq(code(s3.get_bucket_lifecycle_configuration, Bucket=b), ("NoSuchLifecycleConfiguration", 404), "none")
    rules = [
        {"ID": "logs", "Filter": {"Prefix": "logs/"}, "Status": "Enabled", "Expiration": {"Days": 30}},
        {"ID": "tmp", "Filter": {"And": {"Prefix": "tmp/", "Tags": [{"Key": "t", "Value": "1"}]}}, "Status": "Enabled",
         "NoncurrentVersionExpiration": {"NoncurrentDays": 7}},
        {"ID": "mpu", "Filter": {}, "Status": "Disabled", "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 3}},
    ]
    s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": rules})
    got = s3.get_bucket_lifecycle_configuration(Bucket=b)["Rules"]
    eq([r["ID"] for r in got], ["logs", "tmp", "mpu"], "ids")
    eq(got[0]["Expiration"], {"Days": 30}, "expiration")
    r = s3.put_object(Bucket=b, Key="logs/a", Body=b"x")
    assert 'rule-id="logs"' in r.get("Expiration", ""), r
    eq(code(s3.put_bucket_lifecycle_configuration, Bucket=b, LifecycleConfiguration={"Rules": [
        {"ID": "t", "Filter": {}, "Status": "Enabled", "Transitions": [{"Days": 1, "StorageClass": "GLACIER"}]}]}),
       ("NotImplemented", 501), "transition")
    s3.delete_bucket_lifecycle(Bucket=b)
    eq(code(s3.get_bucket_lifecycle_configuration, Bucket=b)[1], 404, "deleted")
    empty(b)


@feature
def policy_acl_ownership():
    b = bucket("policy")
    eq(code(s3.get_bucket_policy, Bucket=b), ("NoSuchBucketPolicy", 404), "no policy")
    pol = {"Version": "2012-10-17", "Statement": [{"Sid": "pub", "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                                                   "Resource": "arn:aws:s3:::%s/public/*" % b}]}
    s3.put_bucket_policy(Bucket=b, Policy=json.dumps(pol))
    eq(json.loads(s3.get_bucket_policy(Bucket=b)["Policy"]), pol, "policy")
    eq(s3.get_bucket_policy_status(Bucket=b)["PolicyStatus"]["IsPublic"], True, "public")
    s3.put_object(Bucket=b, Key="public/x", Body=b"pub")
    s3.put_object(Bucket=b, Key="private/x", Body=b"priv")
    eq(http("GET", "%s/%s/public/x" % (URL, b))[0], 200, "anonymous read of a granted prefix")
    eq(http("GET", "%s/%s/private/x" % (URL, b))[0], 403, "anonymous read elsewhere")
    s3.delete_bucket_policy(Bucket=b)
    acl = s3.get_bucket_acl(Bucket=b)
    eq([g["Permission"] for g in acl["Grants"]], ["FULL_CONTROL"], "private ACL")
    s3.put_bucket_acl(Bucket=b, ACL="public-read")
    acl = s3.get_bucket_acl(Bucket=b)
    assert any(g["Grantee"].get("URI", "").endswith("AllUsers") and g["Permission"] == "READ" for g in acl["Grants"]), acl
    eq(http("GET", "%s/%s/private/x" % (URL, b))[0], 200, "public-read")
    s3.put_bucket_acl(Bucket=b, ACL="private")
    eq(len(s3.get_object_acl(Bucket=b, Key="public/x")["Grants"]), 1, "object ACL")
    s3.put_object_acl(Bucket=b, Key="public/x", ACL="bucket-owner-full-control")
    eq(code(s3.put_object_acl, Bucket=b, Key="public/x", ACL="public-read-write"), ("AccessControlListNotSupported", 400), "object ACL refused")
    oc = s3.get_bucket_ownership_controls(Bucket=b)["OwnershipControls"]["Rules"]
    eq(oc, [{"ObjectOwnership": "BucketOwnerEnforced"}], "ownership")
    s3.put_bucket_ownership_controls(Bucket=b, OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]})
    # ACLs enabled: an object's own ACL, kept while BucketOwnerEnforced
    # comes back, which refuses a bucket ACL granting others.
    s3.put_bucket_ownership_controls(Bucket=b, OwnershipControls={"Rules": [{"ObjectOwnership": "ObjectWriter"}]})
    s3.put_object_acl(Bucket=b, Key="public/x", ACL="authenticated-read")
    grants = s3.get_object_acl(Bucket=b, Key="public/x")["Grants"]
    assert any(g["Grantee"].get("URI", "").endswith("AuthenticatedUsers") and g["Permission"] == "READ" for g in grants), grants
    s3.put_bucket_acl(Bucket=b, GrantRead='id="someone-else"')
    eq(code(s3.put_bucket_ownership_controls, Bucket=b, OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}),
       ("InvalidBucketAclWithObjectOwnership", 400), "BucketOwnerEnforced over a grant")
    s3.put_bucket_acl(Bucket=b, ACL="private")
    s3.put_bucket_ownership_controls(Bucket=b, OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]})
    eq(len(s3.get_object_acl(Bucket=b, Key="public/x")["Grants"]), 1, "object ACL under BucketOwnerEnforced again")
    empty(b)


@feature
def cors():
    b = bucket("cors")
    eq(code(s3.get_bucket_cors, Bucket=b), ("NoSuchCORSConfiguration", 404), "none")
    rules = [{"AllowedOrigins": ["https://app.example"], "AllowedMethods": ["GET", "PUT"], "AllowedHeaders": ["*"],
              "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 600}]
    s3.put_bucket_cors(Bucket=b, CORSConfiguration={"CORSRules": rules})
    got = s3.get_bucket_cors(Bucket=b)["CORSRules"]
    eq(got[0]["AllowedOrigins"], ["https://app.example"], "origins")
    eq(got[0]["MaxAgeSeconds"], 600, "max age")
    st, hd, _ = http("OPTIONS", "%s/%s/some/key" % (URL, b), None, {
        "Origin": "https://app.example", "Access-Control-Request-Method": "PUT",
        "Access-Control-Request-Headers": "content-type,x-amz-meta-a,x-amz-checksum-crc32"})
    eq(st, 200, "preflight")
    hd = {k.lower(): v for k, v in hd.items()}
    eq(hd.get("access-control-allow-origin"), "https://app.example", "allow-origin")
    assert "PUT" in hd.get("access-control-allow-methods", ""), hd
    eq(http("OPTIONS", "%s/%s/k" % (URL, b), None, {"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"})[0], 403, "other origin")
    s3.put_object(Bucket=b, Key="k", Body=b"x")
    g = s3.get_object(Bucket=b, Key="k")  # a signed GET with an Origin: the response headers
    st, hd, _ = http("GET", s3v4.generate_presigned_url("get_object", Params={"Bucket": b, "Key": "k"}), None, {"Origin": "https://app.example"})
    hd = {k.lower(): v for k, v in hd.items()}
    eq(hd.get("access-control-allow-origin"), "https://app.example", "GET allow-origin")
    assert "etag" in hd.get("access-control-expose-headers", "").lower(), hd
    s3.delete_bucket_cors(Bucket=b)
    eq(code(s3.get_bucket_cors, Bucket=b)[1], 404, "deleted")
    empty(b)


@feature
def tagging():
    b = bucket("tagging")
    s3.put_object(Bucket=b, Key="k", Body=b"x", Tagging="a=1&two words=x/y")
    eq(s3.get_object(Bucket=b, Key="k").get("TagCount"), 2, "tag count")
    eq(s3.get_object_tagging(Bucket=b, Key="k")["TagSet"], [{"Key": "a", "Value": "1"}, {"Key": "two words", "Value": "x/y"}], "tags")
    s3.put_object_tagging(Bucket=b, Key="k", Tagging={"TagSet": [{"Key": "z", "Value": ""}]})
    eq(s3.get_object_tagging(Bucket=b, Key="k")["TagSet"], [{"Key": "z", "Value": ""}], "replaced")
    s3.delete_object_tagging(Bucket=b, Key="k")
    eq(s3.get_object_tagging(Bucket=b, Key="k")["TagSet"], [], "deleted")
    eq(code(s3.put_object_tagging, Bucket=b, Key="k", Tagging={"TagSet": [{"Key": "aws:x", "Value": "1"}]}), ("InvalidTag", 400), "aws: prefix")
    eq(code(s3.get_bucket_tagging, Bucket=b), ("NoSuchTagSet", 404), "no bucket tags")
    s3.put_bucket_tagging(Bucket=b, Tagging={"TagSet": [{"Key": "team", "Value": "a"}]})
    eq(s3.get_bucket_tagging(Bucket=b)["TagSet"], [{"Key": "team", "Value": "a"}], "bucket tags")
    s3.delete_bucket_tagging(Bucket=b)
    eq(code(s3.get_bucket_tagging, Bucket=b)[1], 404, "bucket tags deleted")
    s3.copy_object(Bucket=b, Key="k2", CopySource={"Bucket": b, "Key": "k"}, TaggingDirective="REPLACE", Tagging="c=3")
    eq(s3.get_object_tagging(Bucket=b, Key="k2")["TagSet"], [{"Key": "c", "Value": "3"}], "copy REPLACE tags")
    empty(b)


@feature
def object_attributes():
    b = bucket("attrs")
    s3.put_object(Bucket=b, Key="one", Body=b"hello", ChecksumAlgorithm="SHA256")
    a = s3.get_object_attributes(Bucket=b, Key="one", ObjectAttributes=["ETag", "Checksum", "ObjectSize", "StorageClass", "ObjectParts"])
    eq(a["ETag"], hashlib.md5(b"hello").hexdigest(), "etag")
    eq(a["ObjectSize"], 5, "size")
    eq(a["StorageClass"], "STANDARD", "class")
    eq(a["Checksum"]["ChecksumSHA256"], base64.b64encode(hashlib.sha256(b"hello").digest()).decode(), "checksum")
    up = s3.create_multipart_upload(Bucket=b, Key="mp")["UploadId"]
    parts = [{"PartNumber": i, "ETag": s3.upload_part(Bucket=b, Key="mp", UploadId=up, PartNumber=i, Body=b"p" * (5 * MiB if i < 3 else 3))["ETag"]}
             for i in (1, 2, 3)]
    s3.complete_multipart_upload(Bucket=b, Key="mp", UploadId=up, MultipartUpload={"Parts": parts})
    a = s3.get_object_attributes(Bucket=b, Key="mp", ObjectAttributes=["ObjectParts"], MaxParts=2)
    eq(a["ObjectParts"]["TotalPartsCount"], 3, "parts count")
    eq(a["ObjectParts"]["IsTruncated"], True, "truncated")
    a = s3.get_object_attributes(Bucket=b, Key="mp", ObjectAttributes=["ObjectParts"], MaxParts=2, PartNumberMarker=a["ObjectParts"]["NextPartNumberMarker"])
    eq([p["PartNumber"] for p in a["ObjectParts"]["Parts"]], [3], "second page")
    empty(b)


@feature
def conditional_writes():
    b = bucket("cond")
    if BOTO >= (1, 35):
        s3.put_object(Bucket=b, Key="k", Body=b"1", IfNoneMatch="*")
        eq(code(s3.put_object, Bucket=b, Key="k", Body=b"2", IfNoneMatch="*"), ("PreconditionFailed", 412), "second create")
        etag = s3.head_object(Bucket=b, Key="k")["ETag"]
        s3.put_object(Bucket=b, Key="k", Body=b"3", IfMatch=etag)
        eq(code(s3.put_object, Bucket=b, Key="k", Body=b"4", IfMatch=etag), ("PreconditionFailed", 412), "stale If-Match")
    else:  # boto3 before 1.35 has no IfNoneMatch: the header by hand
        undo = add_header(s3, "PutObject", "If-None-Match", "*")
        try:
            s3.put_object(Bucket=b, Key="k", Body=b"1")
            eq(code(s3.put_object, Bucket=b, Key="k", Body=b"2"), ("PreconditionFailed", 412), "second create")
        finally:
            undo()
    eq(s3.get_object(Bucket=b, Key="k")["Body"].read(), b"3" if BOTO >= (1, 35) else b"1", "kept")
    # conditional reads
    etag = s3.head_object(Bucket=b, Key="k")["ETag"]
    eq(code(s3.get_object, Bucket=b, Key="k", IfNoneMatch=etag), ("304", 304), "if-none-match read")
    eq(code(s3.get_object, Bucket=b, Key="k", IfMatch='"x"'), ("PreconditionFailed", 412), "if-match read")
    # conditional deletes (S3, 2025): If-Match on DeleteObject, ETag in DeleteObjects
    other = '"0123456789abcdef0123456789abcdef"'
    if "IfMatch" in s3.meta.service_model.operation_model("DeleteObject").input_shape.members:
        eq(code(s3.delete_object, Bucket=b, Key="k", IfMatch=other), ("PreconditionFailed", 412), "conditional delete, other ETag")
        eq(s3.get_object(Bucket=b, Key="k")["Body"].read() != b"", True, "kept by a refused delete")
        s3.delete_object(Bucket=b, Key="k", IfMatch=etag)
    else:  # boto3 before the feature: the header by hand
        undo = add_header(s3, "DeleteObject", "If-Match", other)
        try:
            eq(code(s3.delete_object, Bucket=b, Key="k"), ("PreconditionFailed", 412), "conditional delete, other ETag")
        finally:
            undo()
        s3.delete_object(Bucket=b, Key="k")
    eq(code(s3.head_object, Bucket=b, Key="k")[1], 404, "conditionally deleted")
    if "ETag" in s3.meta.service_model.shape_for("ObjectIdentifier").members:
        e1 = s3.put_object(Bucket=b, Key="m1", Body=b"1")["ETag"]
        s3.put_object(Bucket=b, Key="m2", Body=b"2")
        r = s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "m1", "ETag": e1}, {"Key": "m2", "ETag": other}]})
        eq([d["Key"] for d in r.get("Deleted", [])], ["m1"], "DeleteObjects with ETags: deleted")
        eq([(x["Key"], x["Code"]) for x in r.get("Errors", [])], [("m2", "PreconditionFailed")], "DeleteObjects with ETags: refused")
    # the size and last modification time (x-amz-if-match-size, -last-modified-time)
    members = s3.meta.service_model.operation_model("DeleteObject").input_shape.members
    if "IfMatchSize" in members and "IfMatchLastModifiedTime" in members:
        s3.put_object(Bucket=b, Key="s", Body=b"four")
        lm = s3.head_object(Bucket=b, Key="s")["LastModified"]
        eq(code(s3.delete_object, Bucket=b, Key="s", IfMatchSize=5), ("PreconditionFailed", 412), "conditional delete, other size")
        eq(code(s3.delete_object, Bucket=b, Key="s", IfMatchLastModifiedTime=lm + datetime.timedelta(seconds=1)),
           ("PreconditionFailed", 412), "conditional delete, other time")
        s3.delete_object(Bucket=b, Key="never-was", IfMatchSize=3)  # no object: 204
        s3.delete_object(Bucket=b, Key="s", IfMatchSize=4, IfMatchLastModifiedTime=lm)
        eq(code(s3.head_object, Bucket=b, Key="s")[1], 404, "deleted by size and time")
    identifier = s3.meta.service_model.shape_for("ObjectIdentifier").members
    if "Size" in identifier and "LastModifiedTime" in identifier:
        s3.put_object(Bucket=b, Key="t", Body=b"t")
        s3.put_object(Bucket=b, Key="u", Body=b"u")
        lm = s3.head_object(Bucket=b, Key="t")["LastModified"]
        r = s3.delete_objects(Bucket=b, Delete={"Objects": [
            {"Key": "t", "Size": 2}, {"Key": "u", "LastModifiedTime": lm - datetime.timedelta(hours=1)}]})
        eq(sorted((x["Key"], x["Code"]) for x in r.get("Errors", [])), [("t", "PreconditionFailed"), ("u", "PreconditionFailed")],
           "DeleteObjects with sizes and times: refused")
        r = s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "t", "Size": 1, "LastModifiedTime": lm}]})
        eq([d["Key"] for d in r.get("Deleted", [])], ["t"], "DeleteObjects with a size and a time: deleted")
    empty(b)


@feature
def object_lock():
    b = "%s-%s" % (PREFIX, "lock")
    s3.create_bucket(Bucket=b, ObjectLockEnabledForBucket=True)
    eq(s3.get_bucket_versioning(Bucket=b)["Status"], "Enabled", "versioning of a lock bucket")
    eq(s3.get_object_lock_configuration(Bucket=b)["ObjectLockConfiguration"], {"ObjectLockEnabled": "Enabled"}, "configuration")
    s3.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration={
        "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}})
    eq(s3.get_object_lock_configuration(Bucket=b)["ObjectLockConfiguration"]["Rule"],
       {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}, "default retention")
    eq(code(s3.put_bucket_versioning, Bucket=b, VersioningConfiguration={"Status": "Suspended"}),
       ("InvalidBucketState", 409), "suspend a lock bucket")
    body = b"backup"
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    v1 = s3.put_object(Bucket=b, Key="k", Body=body, ContentMD5=md5)["VersionId"]
    head = s3.head_object(Bucket=b, Key="k")
    eq(head["ObjectLockMode"], "GOVERNANCE", "default mode")
    left = head["ObjectLockRetainUntilDate"] - datetime.datetime.now(datetime.timezone.utc)
    assert datetime.timedelta(hours=23) < left <= datetime.timedelta(days=1), left
    until = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=2)).replace(microsecond=0)
    v2 = s3.put_object(Bucket=b, Key="k", Body=body, ContentMD5=md5, ObjectLockMode="GOVERNANCE",
                       ObjectLockRetainUntilDate=until, ObjectLockLegalHoldStatus="ON")["VersionId"]
    eq(s3.get_object_retention(Bucket=b, Key="k", VersionId=v2)["Retention"], {"Mode": "GOVERNANCE", "RetainUntilDate": until}, "retention")
    eq(s3.get_object_legal_hold(Bucket=b, Key="k", VersionId=v2)["LegalHold"], {"Status": "ON"}, "legal hold")
    eq(code(s3.delete_object, Bucket=b, Key="k", VersionId=v1), ("AccessDenied", 403), "delete a retained version")
    eq(code(s3.delete_object, Bucket=b, Key="k", VersionId=v2, BypassGovernanceRetention=True), ("AccessDenied", 403), "delete a held version")
    r = s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "k", "VersionId": v1}]})
    eq([(x["Key"], x["Code"]) for x in r.get("Errors", [])], [("k", "AccessDenied")], "DeleteObjects of a retained version")
    eq(code(s3.put_object_retention, Bucket=b, Key="k", VersionId=v2,
            Retention={"Mode": "GOVERNANCE", "RetainUntilDate": until - datetime.timedelta(hours=1)}), ("AccessDenied", 403), "shorten without a bypass")
    s3.put_object_retention(Bucket=b, Key="k", VersionId=v2, BypassGovernanceRetention=True,
                            Retention={"Mode": "GOVERNANCE", "RetainUntilDate": until - datetime.timedelta(hours=1)})
    s3.put_object_legal_hold(Bucket=b, Key="k", VersionId=v2, LegalHold={"Status": "OFF"})
    for v in (v1, v2):
        s3.delete_object(Bucket=b, Key="k", VersionId=v, BypassGovernanceRetention=True)
    eq(s3.list_object_versions(Bucket=b).get("Versions", []), [], "versions after bypassed deletes")
    s3.delete_bucket(Bucket=b)


print("boto3 %s, botocore %s, python %s" % (boto3.__version__, botocore.__version__, sys.version.split()[0]), flush=True)
if failures:
    print("FAILED: " + ", ".join(failures), flush=True)
    sys.exit(1)
print("all passed", flush=True)
