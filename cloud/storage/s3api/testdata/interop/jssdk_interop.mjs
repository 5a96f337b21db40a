// The AWS SDK for JavaScript v3 against the S3 endpoint, feature by
// feature, as a new user would.
//
// Usage: node jssdk_interop.mjs ENDPOINT PREFIX
// with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY of a readwrite key in the
// environment and NODE_PATH (or a node_modules beside it) holding
// @aws-sdk/client-s3, @aws-sdk/s3-request-presigner, @aws-sdk/lib-storage
// and @aws-sdk/s3-presigned-post. Every feature runs on its own buckets
// (PREFIX-...); each prints "ok NAME" or "FAIL NAME: why", and the exit
// status is 1 when any failed.

import { createRequire } from "node:module";
import crypto from "node:crypto";

const require = createRequire(process.env.NODE_PATH ? process.env.NODE_PATH.split(":")[0] + "/" : import.meta.url);
const S3 = require("@aws-sdk/client-s3");
const { getSignedUrl } = require("@aws-sdk/s3-request-presigner");
const { Upload } = require("@aws-sdk/lib-storage");
const { createPresignedPost } = require("@aws-sdk/s3-presigned-post");

const [URL_, PREFIX] = process.argv.slice(2);
const MiB = 1 << 20;
const credentials = { accessKeyId: process.env.AWS_ACCESS_KEY_ID, secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY };
const sent = []; // the headers of each request, for what the SDK sends
const s3 = new S3.S3Client({ region: "us-east-1", endpoint: URL_, forcePathStyle: true, credentials });
s3.middlewareStack.add((next) => async (args) => {
  sent.push({ ...args.request.headers });
  return next(args);
}, { step: "finalizeRequest", name: "recordHeaders", priority: "low" });

const failures = [];
async function feature(name, fn) {
  try {
    await fn();
    console.log("ok " + name);
  } catch (e) {
    failures.push(name);
    console.log(`FAIL ${name}: ${e?.name}: ${e?.message}\n${e?.stack?.split("\n").slice(1, 4).join("\n")}`);
  }
}
process.on("warning", (w) => console.log("WARNING: " + w.message));
const origWarn = console.warn;
console.warn = (...a) => { console.log("WARNING (console.warn): " + a.join(" ")); };

function eq(got, want, what) {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g !== w) throw new Error(`${what}: got ${g}, want ${w}`);
}
async function code(p) {
  try { await p; } catch (e) { return [e.name === "Unknown" || e.name === "UnknownError" ? String(e.$metadata?.httpStatusCode) : e.name, e.$metadata?.httpStatusCode]; }
  return null;
}
const send = (Cmd, input) => s3.send(new S3[Cmd + "Command"](input));
const text = async (out) => Buffer.from(await out.Body.transformToByteArray());
const md5 = (b) => crypto.createHash("md5").update(b).digest("hex");
function rand(n, seed) {
  const out = Buffer.alloc(n);
  let h = crypto.createHash("sha256").update(seed).digest();
  for (let i = 0; i < n; i += h.length) { h = crypto.createHash("sha256").update(h).digest(); h.copy(out, i); }
  return out;
}
async function bucket(name) {
  const b = `${PREFIX}-${name}`;
  await send("CreateBucket", { Bucket: b });
  return b;
}
async function empty(b) {
  let KeyMarker, VersionIdMarker;
  for (;;) {
    const r = await send("ListObjectVersions", { Bucket: b, KeyMarker, VersionIdMarker });
    const objs = [...(r.Versions ?? []), ...(r.DeleteMarkers ?? [])].map((v) => ({ Key: v.Key, VersionId: v.VersionId }));
    if (objs.length) await send("DeleteObjects", { Bucket: b, Delete: { Objects: objs, Quiet: true } });
    if (!r.IsTruncated) break;
    ({ NextKeyMarker: KeyMarker, NextVersionIdMarker: VersionIdMarker } = r);
  }
  await send("DeleteBucket", { Bucket: b });
}
async function http(method, url, body, headers = {}) {
  const r = await fetch(url, { method, body, headers });
  return { status: r.status, headers: r.headers, body: Buffer.from(await r.arrayBuffer()) };
}

console.log(`node ${process.version}, @aws-sdk/client-s3 ${require("@aws-sdk/client-s3/package.json").version}`);

await feature("buckets", async () => {
  const b = await bucket("buckets");
  eq(await code(send("CreateBucket", { Bucket: b })), ["BucketAlreadyOwnedByYou", 409], "create again");
  await send("HeadBucket", { Bucket: b });
  const names = (await send("ListBuckets", {})).Buckets.map((x) => x.Name);
  if (!names.includes(b)) throw new Error("not listed: " + names);
  eq((await send("GetBucketLocation", { Bucket: b })).LocationConstraint ?? null, null, "location");
  eq((await code(send("HeadBucket", { Bucket: b + "-missing" })))[1], 404, "head missing");
  await send("DeleteBucket", { Bucket: b });
});

await feature("objects_and_listings", async () => {
  const b = await bucket("objects");
  sent.length = 0;
  const put = await send("PutObject", { Bucket: b, Key: "a b+c/é.txt", Body: "hello", ContentType: "text/plain", Metadata: { Color: "blue" } });
  const h0 = sent.at(-1);
  console.log("  PutObject sends:", JSON.stringify(Object.fromEntries(Object.entries(h0).filter(([k]) => /^(x-amz-(content-sha256|trailer|sdk-checksum|checksum|decoded)|content-(encoding|length|md5)|transfer-encoding)/i.test(k)))));
  eq(put.ETag, `"${md5("hello")}"`, "etag");
  const h = await send("HeadObject", { Bucket: b, Key: "a b+c/é.txt" });
  eq([h.ContentLength, h.ContentType, h.Metadata], [5, "text/plain", { color: "blue" }], "head");
  const g = await send("GetObject", { Bucket: b, Key: "a b+c/é.txt", Range: "bytes=1-3" });
  eq([(await text(g)).toString(), g.ContentRange], ["ell", "bytes 1-3/5"], "range");
  eq(await code(send("GetObject", { Bucket: b, Key: "nope" })), ["NoSuchKey", 404], "missing");
  for (let i = 0; i < 7; i++) await send("PutObject", { Bucket: b, Key: `dir${i % 3}/f${i}`, Body: "x" });
  await send("PutObject", { Bucket: b, Key: "top", Body: "" });
  let keys = [], prefixes = [], pages = 0;
  for await (const page of S3.paginateListObjectsV2({ client: s3, pageSize: 2 }, { Bucket: b, Delimiter: "/" })) {
    pages++;
    keys.push(...(page.Contents ?? []).map((o) => o.Key));
    prefixes.push(...(page.CommonPrefixes ?? []).map((p) => p.Prefix));
  }
  eq([keys, prefixes], [["top"], ["a b+c/", "dir0/", "dir1/", "dir2/"]], "v2 delimited");
  if (pages < 3) throw new Error("pages " + pages);
  // v1 by marker
  keys = [];
  let Marker;
  for (;;) {
    const r = await send("ListObjects", { Bucket: b, MaxKeys: 3, Marker });
    keys.push(...(r.Contents ?? []).map((o) => o.Key));
    if (!r.IsTruncated) break;
    Marker = r.NextMarker ?? r.Contents.at(-1).Key;
  }
  eq(keys.length, 9, "v1 count");
  keys = []; prefixes = []; Marker = undefined;
  for (;;) {
    const r = await send("ListObjects", { Bucket: b, MaxKeys: 2, Marker, Delimiter: "/" });
    keys.push(...(r.Contents ?? []).map((o) => o.Key));
    prefixes.push(...(r.CommonPrefixes ?? []).map((p) => p.Prefix));
    if (!r.IsTruncated) break;
    if (!r.NextMarker) throw new Error("delimited v1 page without NextMarker");
    Marker = r.NextMarker;
  }
  eq([keys, prefixes], [["top"], ["a b+c/", "dir0/", "dir1/", "dir2/"]], "v1 delimited");
  await send("DeleteObject", { Bucket: b, Key: "top" });
  sent.length = 0;
  const d = await send("DeleteObjects", { Bucket: b, Delete: { Objects: [{ Key: "dir0/f0" }, { Key: "dir0/f3" }, { Key: "ghost" }] } });
  console.log("  DeleteObjects sends:", JSON.stringify(Object.fromEntries(Object.entries(sent.at(-1)).filter(([k]) => /checksum|md5|trailer/i.test(k)))));
  eq(d.Deleted.map((x) => x.Key).sort(), ["dir0/f0", "dir0/f3", "ghost"], "deleted");
  eq((await send("ListObjectsV2", { Bucket: b })).KeyCount, 6, "left");
  await empty(b);
});

await feature("multipart_lib_storage", async () => {
  const b = await bucket("multipart");
  const body = rand(17 * MiB + 123, "mp");
  sent.length = 0;
  const up = new Upload({ client: s3, params: { Bucket: b, Key: "big", Body: body, ContentType: "video/mp4", Metadata: { k: "v" } }, partSize: 5 * MiB, queueSize: 4 });
  await up.done();
  const part = sent.find((h) => h["content-length"] && Number(h["content-length"]) > MiB) ?? {};
  console.log("  UploadPart sends:", JSON.stringify(Object.fromEntries(Object.entries(part).filter(([k]) => /checksum|sha256|trailer|encoding|decoded/i.test(k)))));
  const h = await send("HeadObject", { Bucket: b, Key: "big" });
  if (!h.ETag.endsWith('-4"')) throw new Error("etag " + h.ETag);
  eq([h.ContentType, h.Metadata], ["video/mp4", { k: "v" }], "type and metadata");
  const g = await send("GetObject", { Bucket: b, Key: "big", ChecksumMode: "ENABLED" });
  eq(md5(await text(g)), md5(body), "body");
  console.log("  multipart object's checksum:", g.ChecksumCRC32, g.ChecksumType);
  // with a checksum algorithm of the caller's choice
  await new Upload({ client: s3, params: { Bucket: b, Key: "sha", Body: body.subarray(0, 11 * MiB), ChecksumAlgorithm: "SHA256" }, partSize: 5 * MiB }).done();
  const ga = await send("GetObjectAttributes", { Bucket: b, Key: "sha", ObjectAttributes: ["Checksum", "ObjectParts"] });
  eq([ga.ObjectParts?.TotalPartsCount, ga.Checksum?.ChecksumType], [3, "COMPOSITE"], "SHA256 multipart attributes");
  // a stream of unknown length
  const { Readable } = await import("node:stream");
  const up2 = new Upload({ client: s3, params: { Bucket: b, Key: "stream", Body: Readable.from([body.subarray(0, 6 * MiB), body.subarray(6 * MiB, 12 * MiB)]) }, partSize: 5 * MiB });
  await up2.done();
  eq((await send("HeadObject", { Bucket: b, Key: "stream" })).ContentLength, 12 * MiB, "stream size");
  // small: one PutObject
  await new Upload({ client: s3, params: { Bucket: b, Key: "small", Body: "tiny" } }).done();
  eq((await text(await send("GetObject", { Bucket: b, Key: "small" }))).toString(), "tiny", "small");
  // low level: abort
  const { UploadId } = await send("CreateMultipartUpload", { Bucket: b, Key: "aborted" });
  await send("UploadPart", { Bucket: b, Key: "aborted", UploadId, PartNumber: 1, Body: "x".repeat(10) });
  eq((await send("ListParts", { Bucket: b, Key: "aborted", UploadId })).Parts.map((p) => p.PartNumber), [1], "parts");
  await send("AbortMultipartUpload", { Bucket: b, Key: "aborted", UploadId });
  eq((await send("ListMultipartUploads", { Bucket: b })).Uploads ?? [], [], "no uploads");
  await empty(b);
});

await feature("copies", async () => {
  const a = await bucket("copy-src"), b = await bucket("copy-dst");
  await send("PutObject", { Bucket: a, Key: "small", Body: "small", ContentType: "text/plain", Metadata: { m: "1" } });
  await send("CopyObject", { Bucket: b, Key: "c1", CopySource: `${a}/small` });
  let h = await send("HeadObject", { Bucket: b, Key: "c1" });
  eq([h.ContentType, h.Metadata], ["text/plain", { m: "1" }], "COPY");
  await send("CopyObject", { Bucket: b, Key: "c2", CopySource: encodeURIComponent(`${a}/small`), MetadataDirective: "REPLACE", ContentType: "text/csv", Metadata: { n: "2" } });
  h = await send("HeadObject", { Bucket: b, Key: "c2" });
  eq([h.ContentType, h.Metadata], ["text/csv", { n: "2" }], "REPLACE");
  eq((await code(send("CopyObject", { Bucket: b, Key: "c1", CopySource: `${a}/small`, IfNoneMatch: "*" })))?.[1], 412, "copy If-None-Match onto an object");
  await send("CopyObject", { Bucket: b, Key: "c3", CopySource: `${a}/small`, IfNoneMatch: "*" });
  // UploadPartCopy
  const body = rand(6 * MiB, "copy");
  await send("PutObject", { Bucket: a, Key: "big", Body: body });
  const { UploadId } = await send("CreateMultipartUpload", { Bucket: b, Key: "parts" });
  const p1 = await send("UploadPartCopy", { Bucket: b, Key: "parts", UploadId, PartNumber: 1, CopySource: `${a}/big`, CopySourceRange: `bytes=0-${5 * MiB - 1}` });
  const p2 = await send("UploadPartCopy", { Bucket: b, Key: "parts", UploadId, PartNumber: 2, CopySource: `${a}/big`, CopySourceRange: `bytes=${5 * MiB}-${6 * MiB - 1}` });
  await send("CompleteMultipartUpload", { Bucket: b, Key: "parts", UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: p1.CopyPartResult.ETag }, { PartNumber: 2, ETag: p2.CopyPartResult.ETag }] } });
  eq(md5(await text(await send("GetObject", { Bucket: b, Key: "parts" }))), md5(body), "part copy");
  await empty(a);
  await empty(b);
});

await feature("presigned_urls", async () => {
  const b = await bucket("presign");
  await send("PutObject", { Bucket: b, Key: "k", Body: "presigned body" });
  let u = await getSignedUrl(s3, new S3.GetObjectCommand({ Bucket: b, Key: "k", ResponseContentType: "x/y" }), { expiresIn: 60 });
  let r = await http("GET", u);
  eq([r.status, r.body.toString(), r.headers.get("content-type")], [200, "presigned body", "x/y"], "GET");
  // PUT with a checksum and metadata: the SDK puts them in the query
  const body = "put through a URL";
  const crc = crypto.createHash("sha256").update(body).digest("base64");
  u = await getSignedUrl(s3, new S3.PutObjectCommand({ Bucket: b, Key: "p1", ContentType: "text/csv", Metadata: { owner: "bob" }, ChecksumAlgorithm: "SHA256", ChecksumSHA256: crc }), { expiresIn: 60 });
  console.log("  presigned PUT query:", [...new URL(u).searchParams.keys()].join(","));
  r = await http("PUT", u, body, { "Content-Type": "text/csv" });
  eq(r.status, 200, "PUT with checksum and metadata: " + r.body);
  h = await send("HeadObject", { Bucket: b, Key: "p1", ChecksumMode: "ENABLED" });
  // the checksum parameters of the query are not taken, as S3 ignores them
  eq([h.ContentType, h.Metadata, h.ChecksumSHA256], ["text/csv", { owner: "bob" }, undefined], "stored");
  // ChecksumAlgorithm alone (no value: the SDK cannot hash a body it does not have)
  u = await getSignedUrl(s3, new S3.PutObjectCommand({ Bucket: b, Key: "p2", ChecksumAlgorithm: "CRC32" }), { expiresIn: 60 });
  console.log("  presigned PUT (algorithm only) query:", [...new URL(u).searchParams.keys()].join(","));
  r = await http("PUT", u, body);
  eq(r.status, 200, "PUT with an algorithm: " + r.body);
  // the usual recipe: a plain PutObjectCommand, the browser sending its
  // file's type (the SDK signs the CRC32 of an empty body into the URL)
  u = await getSignedUrl(s3, new S3.PutObjectCommand({ Bucket: b, Key: "p3" }), { expiresIn: 60 });
  console.log("  presigned PUT (plain) query:", [...new URL(u).searchParams.keys()].join(","));
  r = await http("PUT", u, body, { "Content-Type": "application/octet-stream" });
  eq(r.status, 200, "plain PUT: " + r.body);
  // a browser's multipart upload: presigned UploadPart URLs, then completion
  const { UploadId } = await send("CreateMultipartUpload", { Bucket: b, Key: "parts" });
  const etags = [];
  for (const [n, part] of [[1, rand(5 * MiB, "p1")], [2, Buffer.from("tail")]]) {
    u = await getSignedUrl(s3, new S3.UploadPartCommand({ Bucket: b, Key: "parts", UploadId, PartNumber: n }), { expiresIn: 60 });
    r = await http("PUT", u, part);
    eq(r.status, 200, "presigned UploadPart: " + r.body);
    etags.push({ PartNumber: n, ETag: r.headers.get("etag") });
  }
  await send("CompleteMultipartUpload", { Bucket: b, Key: "parts", UploadId, MultipartUpload: { Parts: etags } });
  eq((await send("HeadObject", { Bucket: b, Key: "parts" })).ContentLength, 5 * MiB + 4, "presigned parts");
  // tampered and expired
  r = await http("GET", (await getSignedUrl(s3, new S3.GetObjectCommand({ Bucket: b, Key: "k" }))).replace("/k?", "/p1?"));
  eq(r.status, 403, "tampered");
  u = await getSignedUrl(s3, new S3.GetObjectCommand({ Bucket: b, Key: "k" }), { expiresIn: 1 });
  await new Promise((res) => setTimeout(res, 2100));
  r = await http("GET", u);
  eq(r.status, 403, "expired");
  await empty(b);
});
var h;

await feature("presigned_post", async () => {
  const b = await bucket("post");
  const { url, fields } = await createPresignedPost(s3, {
    Bucket: b, Key: "uploads/${filename}",
    Conditions: [["starts-with", "$key", "uploads/"], ["content-length-range", 1, 1024], { "Content-Type": "text/plain" }, { "x-amz-meta-who": "form" }],
    Fields: { "Content-Type": "text/plain", "x-amz-meta-who": "form", success_action_status: "201" },
    Expires: 300,
  });
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append("file", new Blob(["posted by js"], { type: "text/plain" }), "js.txt");
  let r = await http("POST", url, form);
  eq(r.status, 201, "POST: " + r.body);
  h = await send("HeadObject", { Bucket: b, Key: "uploads/js.txt" });
  eq([h.ContentType, h.Metadata, h.ContentLength], ["text/plain", { who: "form" }, 12], "stored");
  const big = new FormData();
  for (const [k, v] of Object.entries(fields)) big.append(k, v);
  big.append("file", new Blob(["x".repeat(2000)]), "big.txt");
  r = await http("POST", url, big);
  eq(r.status, 400, "over the range: " + r.body);
  await empty(b);
});

await feature("checksums", async () => {
  const b = await bucket("checksums");
  const body = "checksummed body";
  for (const alg of ["CRC32", "CRC32C", "SHA1", "SHA256", "CRC64NVME"]) {
    sent.length = 0;
    let put;
    try {
      put = await send("PutObject", { Bucket: b, Key: alg, Body: body, ChecksumAlgorithm: alg });
    } catch (e) {
      if (alg === "CRC64NVME" && /crc64/i.test(e.message)) { console.log("  (CRC64NVME needs @aws-sdk/crc64-nvme-crt: skipped)"); continue; }
      throw e;
    }
    const got = put["Checksum" + alg];
    if (!got) throw new Error(alg + " not answered: " + JSON.stringify(put));
    const g = await send("GetObject", { Bucket: b, Key: alg, ChecksumMode: "ENABLED" });
    eq((await text(g)).toString(), body, alg + " body"); // the SDK checks it as it reads
    eq(g["Checksum" + alg], got, alg + " returned");
  }
  // the default: what the SDK sends without being asked
  sent.length = 0;
  const put = await send("PutObject", { Bucket: b, Key: "default", Body: body });
  console.log("  default PutObject checksum:", JSON.stringify(Object.fromEntries(Object.entries(sent.at(-1)).filter(([k]) => /checksum|trailer|sha256|encoding/i.test(k)))), "answered", put.ChecksumCRC32);
  // a stream body: aws-chunked with a trailer
  const { Readable } = await import("node:stream");
  sent.length = 0;
  const sp = await send("PutObject", { Bucket: b, Key: "stream", Body: Readable.from([Buffer.from(body)]), ContentLength: body.length });
  console.log("  stream PutObject:", JSON.stringify(Object.fromEntries(Object.entries(sent.at(-1)).filter(([k]) => /checksum|trailer|sha256|encoding|decoded/i.test(k)))));
  eq((await text(await send("GetObject", { Bucket: b, Key: "stream", ChecksumMode: "ENABLED" }))).toString(), body, "stream body");
  eq(sp.ChecksumCRC32 !== undefined, true, "stream checksum answered");
  const bad = crypto.createHash("sha256").update("other").digest("base64");
  eq((await code(send("PutObject", { Bucket: b, Key: "bad", Body: body, ChecksumSHA256: bad })))[1], 400, "wrong checksum");
  // multipart with per-part checksums, then a part read
  const { UploadId } = await send("CreateMultipartUpload", { Bucket: b, Key: "mp", ChecksumAlgorithm: "CRC32" });
  const p1 = await send("UploadPart", { Bucket: b, Key: "mp", UploadId, PartNumber: 1, Body: Buffer.alloc(5 * MiB, 97), ChecksumAlgorithm: "CRC32" });
  const p2 = await send("UploadPart", { Bucket: b, Key: "mp", UploadId, PartNumber: 2, Body: "b".repeat(10), ChecksumAlgorithm: "CRC32" });
  await send("CompleteMultipartUpload", { Bucket: b, Key: "mp", UploadId, MultipartUpload: { Parts: [
    { PartNumber: 1, ETag: p1.ETag, ChecksumCRC32: p1.ChecksumCRC32 }, { PartNumber: 2, ETag: p2.ETag, ChecksumCRC32: p2.ChecksumCRC32 }] } });
  const g = await send("GetObject", { Bucket: b, Key: "mp", ChecksumMode: "ENABLED" });
  eq((await text(g)).length, 5 * MiB + 10, "mp body");
  const g2 = await send("GetObject", { Bucket: b, Key: "mp", ChecksumMode: "ENABLED", PartNumber: 2 });
  eq([(await text(g2)).toString(), g2.ChecksumCRC32], ["b".repeat(10), p2.ChecksumCRC32], "part read");
  await empty(b);
});

await feature("versioning", async () => {
  const b = await bucket("versions");
  eq((await send("GetBucketVersioning", { Bucket: b })).Status, undefined, "never");
  await send("PutBucketVersioning", { Bucket: b, VersioningConfiguration: { Status: "Enabled" } });
  const ids = [];
  for (let i = 0; i < 5; i++) ids.push((await send("PutObject", { Bucket: b, Key: "k", Body: "v" + i })).VersionId);
  eq((await text(await send("GetObject", { Bucket: b, Key: "k", VersionId: ids[1] }))).toString(), "v1", "by id");
  const d = await send("DeleteObject", { Bucket: b, Key: "k" });
  eq(d.DeleteMarker, true, "marker");
  eq((await code(send("GetObject", { Bucket: b, Key: "k" })))[1], 404, "after marker");
  eq((await code(send("HeadObject", { Bucket: b, Key: "k", VersionId: d.VersionId })))[1], 405, "head marker");
  await send("PutObject", { Bucket: b, Key: "other", Body: "o" });
  const vs = [], dms = [];
  let pages = 0;
  let KeyMarker, VersionIdMarker;
  for (;;) { // the SDK has no paginator for ListObjectVersions
    const page = await send("ListObjectVersions", { Bucket: b, MaxKeys: 2, KeyMarker, VersionIdMarker });
    pages++;
    vs.push(...(page.Versions ?? []).map((v) => [v.Key, v.VersionId]));
    dms.push(...(page.DeleteMarkers ?? []).map((v) => [v.Key, v.VersionId, v.IsLatest]));
    if (!page.IsTruncated) break;
    ({ NextKeyMarker: KeyMarker, NextVersionIdMarker: VersionIdMarker } = page);
  }
  eq(vs.length, 6, "versions");
  eq(dms, [["k", d.VersionId, true]], "markers");
  eq(vs.filter((v) => v[0] === "k").map((v) => v[1]), [...ids].reverse(), "newest first");
  if (pages < 3) throw new Error("pages " + pages);
  await send("DeleteObject", { Bucket: b, Key: "k", VersionId: d.VersionId });
  eq((await text(await send("GetObject", { Bucket: b, Key: "k" }))).toString(), "v4", "back");
  await send("PutObjectTagging", { Bucket: b, Key: "k", VersionId: ids[1], Tagging: { TagSet: [{ Key: "v", Value: "1" }] } });
  eq((await send("GetObjectTagging", { Bucket: b, Key: "k", VersionId: ids[1] })).TagSet, [{ Key: "v", Value: "1" }], "version tags");
  eq((await send("GetObjectTagging", { Bucket: b, Key: "k" })).TagSet, [], "current untagged");
  const r = await send("DeleteObjects", { Bucket: b, Delete: { Objects: [{ Key: "k", VersionId: ids[0] }, { Key: "other" }] } });
  eq(r.Deleted.find((x) => x.Key === "other")?.DeleteMarker, true, "DeleteObjects marker");
  await empty(b);
});

await feature("encryption", async () => {
  const b = await bucket("sse");
  let r = await send("PutObject", { Bucket: b, Key: "s3", Body: "secret", ServerSideEncryption: "AES256" });
  eq(r.ServerSideEncryption, "AES256", "SSE-S3");
  const key = Buffer.from([...Array(32).keys()]);
  // the JS SDK takes the key as a string or bytes and adds its MD5
  for (const [name, k] of [["bytes", key], ["base64", key.toString("base64")]]) {
    r = await send("PutObject", { Bucket: b, Key: "c-" + name, Body: "customer", SSECustomerAlgorithm: "AES256", SSECustomerKey: k });
    eq(r.SSECustomerAlgorithm, "AES256", "SSE-C put " + name);
    const g = await send("GetObject", { Bucket: b, Key: "c-" + name, SSECustomerAlgorithm: "AES256", SSECustomerKey: k });
    eq((await text(g)).toString(), "customer", "SSE-C get " + name);
  }
  eq((await code(send("GetObject", { Bucket: b, Key: "c-bytes" })))[1], 400, "no key");
  // multipart SSE-C with lib-storage
  const body = rand(11 * MiB, "ssec");
  await new Upload({ client: s3, params: { Bucket: b, Key: "cbig", Body: body, SSECustomerAlgorithm: "AES256", SSECustomerKey: key }, partSize: 5 * MiB }).done();
  eq(md5(await text(await send("GetObject", { Bucket: b, Key: "cbig", SSECustomerAlgorithm: "AES256", SSECustomerKey: key }))), md5(body), "SSE-C multipart");
  await send("CopyObject", { Bucket: b, Key: "ccopy", CopySource: `${b}/c-bytes`, CopySourceSSECustomerAlgorithm: "AES256", CopySourceSSECustomerKey: key, ServerSideEncryption: "AES256" });
  eq((await send("HeadObject", { Bucket: b, Key: "ccopy" })).ServerSideEncryption, "AES256", "SSE-C to SSE-S3 copy");
  // presigned GET of an SSE-C object: the key goes in headers
  const u = await getSignedUrl(s3, new S3.GetObjectCommand({ Bucket: b, Key: "c-bytes", SSECustomerAlgorithm: "AES256", SSECustomerKey: key }), { expiresIn: 60 });
  const sh = await http("GET", u, undefined, {
    "x-amz-server-side-encryption-customer-algorithm": "AES256", "x-amz-server-side-encryption-customer-key": key.toString("base64"),
    "x-amz-server-side-encryption-customer-key-md5": crypto.createHash("md5").update(key).digest("base64") });
  eq([sh.status, sh.body.toString()], [200, "customer"], "presigned SSE-C GET");
  await send("PutBucketEncryption", { Bucket: b, ServerSideEncryptionConfiguration: { Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }] } });
  eq((await send("GetBucketEncryption", { Bucket: b })).ServerSideEncryptionConfiguration.Rules[0].ApplyServerSideEncryptionByDefault.SSEAlgorithm, "AES256", "default");
  eq((await send("PutObject", { Bucket: b, Key: "d", Body: "d" })).ServerSideEncryption, "AES256", "by default");
  await send("DeleteBucketEncryption", { Bucket: b });
  eq((await code(send("GetBucketEncryption", { Bucket: b })))[1], 404, "deleted");
  await empty(b);
});

await feature("lifecycle", async () => {
  const b = await bucket("lifecycle");
  eq((await code(send("GetBucketLifecycleConfiguration", { Bucket: b })))[1], 404, "none");
  sent.length = 0;
  await send("PutBucketLifecycleConfiguration", { Bucket: b, LifecycleConfiguration: { Rules: [
    { ID: "logs", Filter: { Prefix: "logs/" }, Status: "Enabled", Expiration: { Days: 30 } },
    { ID: "old", Filter: { ObjectSizeGreaterThan: 10 }, Status: "Enabled", NoncurrentVersionExpiration: { NoncurrentDays: 3, NewerNoncurrentVersions: 2 } },
    { ID: "mpu", Filter: { Prefix: "" }, Status: "Enabled", AbortIncompleteMultipartUpload: { DaysAfterInitiation: 2 } }] } });
  console.log("  PutBucketLifecycleConfiguration sends:", JSON.stringify(Object.fromEntries(Object.entries(sent.at(-1)).filter(([k]) => /checksum|md5/i.test(k)))));
  const got = (await send("GetBucketLifecycleConfiguration", { Bucket: b })).Rules;
  eq(got.map((r) => r.ID), ["logs", "old", "mpu"], "ids");
  const r = await send("PutObject", { Bucket: b, Key: "logs/x", Body: "x" });
  if (!/rule-id="logs"/.test(r.Expiration ?? "")) throw new Error("expiration " + r.Expiration);
  await send("DeleteBucketLifecycle", { Bucket: b });
  await empty(b);
});

await feature("policy_acl_ownership", async () => {
  const b = await bucket("policy");
  const pol = { Version: "2012-10-17", Statement: [{ Effect: "Allow", Principal: "*", Action: ["s3:GetObject"], Resource: [`arn:aws:s3:::${b}/public/*`] }] };
  await send("PutBucketPolicy", { Bucket: b, Policy: JSON.stringify(pol) });
  eq(JSON.parse((await send("GetBucketPolicy", { Bucket: b })).Policy), pol, "policy");
  eq((await send("GetBucketPolicyStatus", { Bucket: b })).PolicyStatus.IsPublic, true, "public");
  await send("PutObject", { Bucket: b, Key: "public/x", Body: "pub" });
  eq((await http("GET", `${URL_}/${b}/public/x`)).status, 200, "anonymous");
  await send("DeleteBucketPolicy", { Bucket: b });
  eq((await http("GET", `${URL_}/${b}/public/x`)).status, 403, "anonymous after delete");
  await send("PutBucketAcl", { Bucket: b, ACL: "public-read" });
  const acl = await send("GetBucketAcl", { Bucket: b });
  if (!acl.Grants.some((g) => g.Grantee.URI?.endsWith("AllUsers") && g.Permission === "READ")) throw new Error(JSON.stringify(acl.Grants));
  await send("PutBucketAcl", { Bucket: b, ACL: "private" });
  eq((await send("GetObjectAcl", { Bucket: b, Key: "public/x" })).Grants.length, 1, "object acl");
  eq((await send("GetBucketOwnershipControls", { Bucket: b })).OwnershipControls.Rules, [{ ObjectOwnership: "BucketOwnerEnforced" }], "ownership");
  await send("PutBucketOwnershipControls", { Bucket: b, OwnershipControls: { Rules: [{ ObjectOwnership: "BucketOwnerEnforced" }] } });
  // a bucket created with BucketOwnerEnforced, as the console does
  await send("CreateBucket", { Bucket: b + "-own", ObjectOwnership: "BucketOwnerEnforced" });
  await send("DeleteBucket", { Bucket: b + "-own" });
  await empty(b);
});

await feature("cors", async () => {
  const b = await bucket("cors");
  await send("PutBucketCors", { Bucket: b, CORSConfiguration: { CORSRules: [
    { AllowedOrigins: ["http://localhost:3000"], AllowedMethods: ["GET", "PUT", "POST"], AllowedHeaders: ["*"], ExposeHeaders: ["ETag", "x-amz-version-id"], MaxAgeSeconds: 300 }] } });
  eq((await send("GetBucketCors", { Bucket: b })).CORSRules[0].AllowedMethods, ["GET", "PUT", "POST"], "rules");
  // what a browser sends before the SDK's PutObject from a page
  let r = await http("OPTIONS", `${URL_}/${b}/upload.bin?x-id=PutObject`, undefined, {
    Origin: "http://localhost:3000", "Access-Control-Request-Method": "PUT",
    "Access-Control-Request-Headers": "amz-sdk-invocation-id,amz-sdk-request,authorization,content-type,x-amz-checksum-crc32,x-amz-content-sha256,x-amz-date,x-amz-sdk-checksum-algorithm,x-amz-user-agent" });
  eq(r.status, 200, "preflight");
  eq(r.headers.get("access-control-allow-origin"), "http://localhost:3000", "allow-origin");
  eq(r.headers.get("access-control-max-age"), "300", "max-age");
  r = await http("OPTIONS", `${URL_}/${b}/x`, undefined, { Origin: "http://evil.test", "Access-Control-Request-Method": "GET" });
  eq(r.status, 403, "other origin");
  await send("PutObject", { Bucket: b, Key: "x", Body: "x" });
  r = await http("GET", await getSignedUrl(s3, new S3.GetObjectCommand({ Bucket: b, Key: "x" })), undefined, { Origin: "http://localhost:3000" });
  eq(r.headers.get("access-control-allow-origin"), "http://localhost:3000", "GET allow-origin");
  await send("DeleteBucketCors", { Bucket: b });
  await empty(b);
});

await feature("tagging", async () => {
  const b = await bucket("tagging");
  await send("PutObject", { Bucket: b, Key: "k", Body: "x", Tagging: "a=1&two%20words=x%2Fy" });
  eq((await send("GetObject", { Bucket: b, Key: "k" })).TagCount, 2, "count");
  eq((await send("GetObjectTagging", { Bucket: b, Key: "k" })).TagSet, [{ Key: "a", Value: "1" }, { Key: "two words", Value: "x/y" }], "tags");
  await send("PutObjectTagging", { Bucket: b, Key: "k", Tagging: { TagSet: [{ Key: "z", Value: "" }] } });
  await send("DeleteObjectTagging", { Bucket: b, Key: "k" });
  eq((await send("GetObjectTagging", { Bucket: b, Key: "k" })).TagSet, [], "deleted");
  await send("PutBucketTagging", { Bucket: b, Tagging: { TagSet: [{ Key: "team", Value: "a" }] } });
  eq((await send("GetBucketTagging", { Bucket: b })).TagSet, [{ Key: "team", Value: "a" }], "bucket");
  await send("DeleteBucketTagging", { Bucket: b });
  eq((await code(send("GetBucketTagging", { Bucket: b })))[0], "NoSuchTagSet", "bucket deleted");
  // tags through lib-storage (multipart: on CreateMultipartUpload)
  await new Upload({ client: s3, params: { Bucket: b, Key: "mp", Body: rand(6 * MiB, "t") }, partSize: 5 * MiB, tags: [{ Key: "via", Value: "upload" }] }).done();
  eq((await send("GetObjectTagging", { Bucket: b, Key: "mp" })).TagSet, [{ Key: "via", Value: "upload" }], "lib-storage tags");
  await empty(b);
});

await feature("object_attributes", async () => {
  const b = await bucket("attrs");
  await send("PutObject", { Bucket: b, Key: "one", Body: "hello", ChecksumAlgorithm: "SHA256" });
  const a = await send("GetObjectAttributes", { Bucket: b, Key: "one", ObjectAttributes: ["ETag", "Checksum", "ObjectSize", "StorageClass", "ObjectParts"] });
  eq([a.ETag, a.ObjectSize, a.StorageClass], [md5("hello"), 5, "STANDARD"], "attrs");
  eq(a.Checksum?.ChecksumSHA256, crypto.createHash("sha256").update("hello").digest("base64"), "checksum");
  await empty(b);
});

await feature("conditional_writes", async () => {
  const b = await bucket("cond");
  await send("PutObject", { Bucket: b, Key: "k", Body: "1", IfNoneMatch: "*" });
  eq(await code(send("PutObject", { Bucket: b, Key: "k", Body: "2", IfNoneMatch: "*" })), ["PreconditionFailed", 412], "second create");
  const { ETag } = await send("HeadObject", { Bucket: b, Key: "k" });
  await send("PutObject", { Bucket: b, Key: "k", Body: "3", IfMatch: ETag });
  eq((await code(send("PutObject", { Bucket: b, Key: "k", Body: "4", IfMatch: ETag })))[1], 412, "stale If-Match");
  eq((await code(send("GetObject", { Bucket: b, Key: "k", IfNoneMatch: (await send("HeadObject", { Bucket: b, Key: "k" })).ETag })))[1], 304, "304");
  // conditional deletes (S3, 2025): If-Match on DeleteObject, ETag in DeleteObjects
  const other = '"0123456789abcdef0123456789abcdef"';
  eq((await code(send("DeleteObject", { Bucket: b, Key: "k", IfMatch: other })))?.[1], 412, "conditional delete, other ETag");
  await send("DeleteObject", { Bucket: b, Key: "k", IfMatch: (await send("HeadObject", { Bucket: b, Key: "k" })).ETag });
  eq((await code(send("HeadObject", { Bucket: b, Key: "k" })))?.[1], 404, "conditionally deleted");
  const e1 = (await send("PutObject", { Bucket: b, Key: "m1", Body: "1" })).ETag;
  await send("PutObject", { Bucket: b, Key: "m2", Body: "2" });
  const dr = await send("DeleteObjects", { Bucket: b, Delete: { Objects: [{ Key: "m1", ETag: e1 }, { Key: "m2", ETag: other }] } });
  eq([(dr.Deleted ?? []).map((d) => d.Key), (dr.Errors ?? []).map((x) => [x.Key, x.Code])], [["m1"], [["m2", "PreconditionFailed"]]], "DeleteObjects with ETags");
  await send("PutObject", { Bucket: b, Key: "k", Body: "5" });
  // lib-storage multipart with If-None-Match on completion
  const up = new Upload({ client: s3, params: { Bucket: b, Key: "k", Body: rand(6 * MiB, "c"), IfNoneMatch: "*" }, partSize: 5 * MiB });
  eq((await code(up.done()))?.[1], 412, "multipart create-only");
  await empty(b);
});

console.warn = origWarn;
s3.destroy(); // its kept-alive sockets would hold node open
if (failures.length) {
  console.log("FAILED: " + failures.join(", "));
  process.exit(1);
}
console.log("all passed");
process.exit(0);
