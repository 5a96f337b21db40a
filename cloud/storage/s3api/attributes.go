package s3api

import (
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/latticenet/lattice/cloud/storage/cloudstore"
)

// objectAttributeNames are the attributes GetObjectAttributes reports;
// the names are case-sensitive, as in S3.
var objectAttributeNames = map[string]bool{"ETag": true, "Checksum": true, "ObjectParts": true, "StorageClass": true, "ObjectSize": true}

// objectAttributes reads x-amz-object-attributes: one header with the
// names joined by commas, or one header per name (as the AWS SDKs send
// them).
func objectAttributes(h http.Header) (map[string]bool, error) {
	want := map[string]bool{}
	for _, v := range h.Values("X-Amz-Object-Attributes") {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name == "" {
				continue
			}
			if !objectAttributeNames[name] {
				return nil, s3err(http.StatusBadRequest, "InvalidArgument", "Invalid attribute name specified.")
			}
			want[name] = true
		}
	}
	if len(want) == 0 {
		return nil, s3err(http.StatusBadRequest, "InvalidRequest", "The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty")
	}
	return want, nil
}

// objectPart is a Part of GetObjectAttributes' ObjectParts.
type objectPart struct {
	checksumXML
	PartNumber int
	Size       int64
}

type objectParts struct {
	IsTruncated          bool
	MaxParts             int
	NextPartNumberMarker int
	PartNumberMarker     int
	Parts                []objectPart `xml:"Part"`
	PartsCount           int
}

// getObjectAttributes answers GetObjectAttributes: the attributes asked
// for in x-amz-object-attributes, and for an object completed from a
// multipart upload one page of its parts (x-amz-max-parts, at most 1000,
// after x-amz-part-number-marker). The ETag is unquoted, as S3 sends it
// here alone. ObjectParts is left out for an object uploaded whole, as
// S3 leaves it out.
func (s *Server) getObjectAttributes(w http.ResponseWriter, r *request) error {
	want, err := objectAttributes(r.Header)
	if err != nil {
		return err
	}
	maxParts, err := intParam(r.Header.Get("X-Amz-Max-Parts"), 1000, 1000, "x-amz-max-parts")
	if err != nil {
		return err
	}
	marker, err := intParam(r.Header.Get("X-Amz-Part-Number-Marker"), 0, cloudstore.MaxPartNumber, "x-amz-part-number-marker")
	if err != nil {
		return err
	}
	id, err := versionParam(r)
	if err != nil {
		return err
	}
	ck, _, err := readEncryption(r)
	if err != nil {
		return err
	}
	obj, err := s.st.ObjectVersion(r.account, r.bucket, r.key, id)
	if err == nil && obj.DeleteMarker {
		err = &cloudstore.DeleteMarkerError{VersionID: obj.VersionID}
	}
	if err != nil {
		return s.lookupError(w, r, r.bucket, id, err)
	}
	if g := r.gate(); g != nil {
		if err := g.check(obj); err != nil {
			return err // another object than admitObject judged
		}
	}
	// As in S3, an SSE-C object's attributes are its key holder's: its
	// checksum is the plaintext's.
	if err := s.st.CheckKey(r.Context(), obj, ck); err != nil {
		return err
	}
	type result struct {
		XMLName      xml.Name `xml:"GetObjectAttributesResponse"`
		Xmlns        string   `xml:"xmlns,attr"`
		ETag         string   `xml:",omitempty"`
		Checksum     *checksumXML
		ObjectParts  *objectParts
		StorageClass string `xml:",omitempty"`
		ObjectSize   *int64
	}
	res := result{Xmlns: xmlns}
	if want["ETag"] {
		res.ETag = obj.ETag
	}
	if want["Checksum"] {
		res.Checksum = objectChecksumXML(obj)
	}
	if want["StorageClass"] {
		res.StorageClass = "STANDARD"
	}
	if want["ObjectSize"] {
		res.ObjectSize = &obj.Size
	}
	if want["ObjectParts"] && len(obj.PartSizes) > 0 {
		// An object completed before part sizes were kept has none:
		// reads of one part answer it as a single part, and this agrees.
		p := &objectParts{MaxParts: maxParts, PartNumberMarker: marker, NextPartNumberMarker: marker, PartsCount: len(obj.PartSizes)}
		for n := marker + 1; n <= len(obj.PartSizes); n++ {
			if len(p.Parts) == maxParts {
				p.IsTruncated = maxParts > 0
				break
			}
			p.Parts = append(p.Parts, objectPart{checksumXML: partChecksumXML(obj, n), PartNumber: n, Size: obj.PartSizes[n-1]})
			p.NextPartNumberMarker = n
		}
		res.ObjectParts = p
	}
	w.Header().Set("Last-Modified", obj.LastModified.UTC().Format(http.TimeFormat))
	setVersionHeader(w.Header(), obj)
	writeXML(w, http.StatusOK, res)
	return nil
}
