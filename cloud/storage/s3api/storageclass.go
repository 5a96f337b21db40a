package s3api

import "net/http"

// Every object here is kept in one storage class, STANDARD: listings,
// ListParts, ListObjectVersions and GetObjectAttributes say so. A write
// asking for another (x-amz-storage-class on PutObject, CopyObject,
// CreateMultipartUpload; the form field on POST Object) is refused rather
// than stored as STANDARD while the client believes otherwise, with 400
// InvalidStorageClass: what S3 answers a class it does not offer where
// asked (directory buckets, Outposts) and MinIO any class but its own. A
// 4xx, unlike 501, is not retried by s3cmd (five times, over 45 s).

// s3StorageClasses are the storage classes S3 documents for an object
// write.
var s3StorageClasses = map[string]bool{
	"STANDARD": true, "REDUCED_REDUNDANCY": true, "STANDARD_IA": true, "ONEZONE_IA": true,
	"INTELLIGENT_TIERING": true, "GLACIER": true, "DEEP_ARCHIVE": true, "OUTPOSTS": true,
	"GLACIER_IR": true, "SNOW": true, "EXPRESS_ONEZONE": true, "FSX_OPENZFS": true,
}

// checkStorageClass checks the storage class a write asks for: none or
// STANDARD.
func checkStorageClass(class string) error {
	switch {
	case class == "" || class == "STANDARD":
		return nil
	case s3StorageClasses[class]:
		return s3err(http.StatusBadRequest, "InvalidStorageClass", "The storage class you specified is not valid: "+class+" is not offered, "+
			"every object here is kept in STANDARD; send STANDARD or no x-amz-storage-class.")
	}
	return s3err(http.StatusBadRequest, "InvalidStorageClass", "The storage class you specified is not valid")
}
