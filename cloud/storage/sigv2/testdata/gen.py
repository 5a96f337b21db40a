# Generates vectors.json: Signature Version 2 strings to sign and
# signatures computed by botocore's HmacV1Auth / HmacV1QueryAuth (an
# implementation independent of package sigv2), plus one x-amz-date case
# built by hand from S3's definition, which botocore never sends.
# Run once: python3 gen.py > vectors.json
import base64, hashlib, hmac, json
from urllib.parse import urlsplit
from botocore.auth import HmacV1Auth, HmacV1QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

ID, SECRET = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
creds = Credentials(ID, SECRET)
DATE = "Tue, 27 Mar 2007 19:36:42 +0000"
EXPIRES = "1175139620"

class FixedHeader(HmacV1Auth):
    def _get_date(self):
        return DATE

class FixedQuery(HmacV1QueryAuth):
    def _get_date(self):
        return EXPIRES

def case(name, method, url, headers=(), bucket="", query=False):
    req = AWSRequest(method=method, url=url)
    for k, v in headers:
        req.headers[k] = v  # HTTPHeaders keeps repeated names
    p = urlsplit(url).path
    if bucket:
        req.auth_path = "/" + bucket + p
    elif p.count("/") == 1:
        req.auth_path = p + "/"  # as botocore's S3 client addresses a bucket
    signer = FixedQuery(creds) if query else FixedHeader(creds)
    seen = []
    sign = signer.sign_string
    signer.sign_string = lambda sts: seen.append(sts) or sign(sts)
    signer.add_auth(req)
    sts = seen[0]
    out = {"name": name, "method": method, "url": req.url, "bucket": bucket,
           # A presigned URL is used without the headers it was made from.
           "headers": [] if query else [[k, v] for k, v in req.headers.items()],
           "string_to_sign": sts, "signature": sign(sts)}
    return out

cases = [
    case("aws doc object GET, virtual-hosted", "GET", "http://johnsmith.s3.amazonaws.com/photos/puppy.jpg", bucket="johnsmith"),
    case("path-style PUT with type and length", "PUT", "http://127.0.0.1:9000/johnsmith/photos/puppy.jpg",
         [("Content-Type", "image/jpeg"), ("Content-Length", "94328")]),
    case("md5, acl and repeated metadata", "PUT", "http://127.0.0.1:9000/static/db-backup.dat.gz",
         [("Content-MD5", "4gJE4saaMU4BqNR0kLY+lw=="), ("Content-Type", "application/x-download"),
          ("X-Amz-Acl", "public-read"), ("X-Amz-Meta-ReviewedBy", "joe@example.com"),
          ("X-Amz-Meta-ReviewedBy", "jane@example.com"), ("X-Amz-Meta-FileChecksum", " 0x02661779 ")]),
    case("subresources kept, other parameters left out", "GET", "http://127.0.0.1:9000/b/k?versionId=3%2F4&acl&prefix=x&max-keys=5"),
    case("response overrides decoded", "GET",
         "http://127.0.0.1:9000/b/k?response-content-type=text%2Fplain&response-content-disposition=attachment%3B%20filename%3D%22a%20b.txt%22"),
    case("escaped path", "GET", "http://127.0.0.1:9000/b/a%20b/%C3%A9%2B.txt"),
    case("path-style bucket, signed as /bucket/", "PUT", "http://127.0.0.1:9000/newbucket"),
    case("multipart part upload", "PUT", "http://127.0.0.1:9000/b/big?partNumber=3&uploadId=XyZ"),
    case("presigned GET", "GET", "http://127.0.0.1:9000/johnsmith/photos/puppy.jpg", query=True),
    case("presigned PUT, metadata and type moved to the query", "PUT", "http://127.0.0.1:9000/b/k",
         [("Content-Type", "text/plain"), ("x-amz-meta-color", "blue")], query=True),
]

# x-amz-date: the Date line is empty and x-amz-date is signed among the
# x-amz-* headers (S3's definition; botocore does not send it).
sts = "DELETE\n\n\n\nx-amz-date:" + DATE + "\n/johnsmith/photos/puppy.jpg"
sig = base64.b64encode(hmac.new(SECRET.encode(), sts.encode(), hashlib.sha1).digest()).decode()
cases.append({"name": "x-amz-date, empty Date line", "method": "DELETE", "url": "http://127.0.0.1:9000/johnsmith/photos/puppy.jpg",
              "bucket": "", "headers": [["Date", "Wed, 01 Jan 2020 00:00:00 GMT"], ["x-amz-date", DATE], ["Authorization", "AWS " + ID + ":" + sig]],
              "string_to_sign": sts, "signature": sig})
print(json.dumps(cases, indent=1))
