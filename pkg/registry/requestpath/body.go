package requestpath

import (
	"bytes"
	"io"
	"mime"
	"net/http"
)

// ReadBody reads the body of r, at most limit bytes of it, and puts what it read back in front of the rest,
// so that the next handler reads the whole body as sent. ok is false when the body could not be read or is
// larger than limit: the generic handler then reads (and refuses) it.
func ReadBody(r *http.Request, limit int64) (body []byte, ok bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	return body, err == nil && int64(len(body)) <= limit
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

// WithBody returns a copy of r whose body is body.
func WithBody(r *http.Request, body []byte) *http.Request {
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	return r2
}

// Forward serves r with body as its body.
func Forward(next http.Handler, w http.ResponseWriter, r *http.Request, body []byte) {
	next.ServeHTTP(w, WithBody(r, body))
}

// MediaType is the media type of r's Content-Type, without parameters, or "".
func MediaType(r *http.Request) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

// responseRecorder keeps a response so that a lost race can be retried before the client sees it.
type responseRecorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (rr *responseRecorder) Header() http.Header { return rr.header }

func (rr *responseRecorder) WriteHeader(code int) {
	if rr.code == 0 {
		rr.code = code
	}
}

func (rr *responseRecorder) Write(p []byte) (int, error) {
	if rr.code == 0 {
		rr.code = http.StatusOK
	}
	return rr.body.Write(p)
}

// replay sends the kept response.
func (rr *responseRecorder) replay(w http.ResponseWriter) {
	for key, values := range rr.header {
		w.Header()[key] = values
	}
	if rr.code == 0 {
		rr.code = http.StatusOK
	}
	w.WriteHeader(rr.code)
	_, _ = w.Write(rr.body.Bytes())
}
