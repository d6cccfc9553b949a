package functions

import (
	"testing"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ingest"
)

func TestDecodeObject(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    ingest.Object
		wantErr bool
	}{
		{
			name: "int64 fields as JSON strings, as Eventarc sends them",
			data: `{"bucket":"alpinashop-catalogo","name":"exportaciones/2026/03/14/p.csv","generation":"1710400000000001","size":"512","md5Hash":"q1w2e3==","metageneration":"1"}`,
			want: ingest.Object{Bucket: "alpinashop-catalogo", Name: "exportaciones/2026/03/14/p.csv", Generation: 1710400000000001, Size: 512, MD5: "q1w2e3=="},
		},
		{
			name: "int64 fields as numbers",
			data: `{"bucket":"b","name":"o.csv","generation":7,"size":1}`,
			want: ingest.Object{Bucket: "b", Name: "o.csv", Generation: 7, Size: 1},
		},
		{name: "composite object without md5", data: `{"bucket":"b","name":"o.csv","generation":"7","crc32c":"AAAAAA=="}`, want: ingest.Object{Bucket: "b", Name: "o.csv", Generation: 7}},
		{name: "missing generation", data: `{"bucket":"b","name":"o.csv"}`, wantErr: true},
		{name: "generation not a number", data: `{"bucket":"b","name":"o.csv","generation":"abc"}`, wantErr: true},
		{name: "not JSON", data: `<xml/>`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := cloudevents.NewEvent()
			e.SetID("1")
			e.SetType(FinalizedType)
			e.SetSource("//storage.googleapis.com/projects/_/buckets/b")
			e.DataEncoded = []byte(tt.data)
			got, err := DecodeObject(e)
			if (err != nil) != tt.wantErr {
				t.Fatalf("DecodeObject error = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" && !tt.wantErr {
				t.Errorf("object (-want +got):\n%s", diff)
			}
		})
	}
}
