package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// The read request names a registered read and carries its parameters as
// text (warehouse.FormatParam), each with its declared type, so the server
// rebuilds the statement from its own registry: nothing but a named read
// runs through this path.
//
//	POST read  {"name":N,"params":[{"name":P,"type":T,"array":B,"values":[...]}]}
//	        -> {"columns":[...],"rows":[[...]]}
type readParam struct {
	Name   string         `json:"name"`
	Type   warehouse.Type `json:"type"`
	Array  bool           `json:"array"`
	Values []textCell     `json:"values"`
}

// Read runs a named read on the server's warehouse.
func (c *Client) Read(ctx context.Context, s warehouse.Statement) (warehouse.Result, error) {
	op := "read " + s.Name()
	b := append(appendString([]byte(`{"name":`), s.Name()), `,"params":[`...)
	for i, p := range s.Params() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendString(append(b, `{"name":`...), p.Name), `,"type":`...)
		b = appendString(b, string(p.Type))
		b = append(append(b, `,"array":`...), strconv.FormatBool(p.Array)...)
		b = append(b, `,"values":[`...)
		for j, v := range p.Values {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendString(b, warehouse.FormatParam(p.Type, v))
		}
		b = append(b, "]}"...)
	}
	b = append(b, "]}"...)
	resp, err := c.post(ctx, pathRead, nil, jsonType, b, nil, op, http.StatusOK)
	if err != nil {
		return warehouse.Result{}, err
	}
	defer drain(resp)
	res, err := readResult(resp.Body)
	if err != nil {
		return warehouse.Result{}, fmt.Errorf("remote warehouse: %s: read answer: %w", op, err)
	}
	return res, nil
}

func (h *handler) read(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name   *string     `json:"name"`
		Params []readParam `json:"params"`
	}
	if err := decodeJSON(w, r, &req); err != nil || req.Name == nil {
		if err == nil {
			err = errors.New(`body must be {"name": "...", "params": [...]}`)
		}
		fail(w, http.StatusBadRequest, "read", err)
		return
	}
	s, err := statementOf(*req.Name, req.Params)
	if err != nil {
		fail(w, http.StatusBadRequest, "read "+*req.Name, err)
		return
	}
	res, err := h.b.Read(r.Context(), s)
	if err != nil {
		fail(w, http.StatusInternalServerError, "read "+*req.Name, err)
		return
	}
	w.Header().Set("Content-Type", jsonType)
	_ = writeResult(w, res) // an error here is the client gone; nobody to tell
}

func statementOf(name string, wire []readParam) (warehouse.Statement, error) {
	params := make([]warehouse.Param, len(wire))
	for i, p := range wire {
		params[i] = warehouse.Param{ParamSpec: warehouse.ParamSpec{Name: p.Name, Type: p.Type, Array: p.Array}}
		for _, cell := range p.Values {
			v, err := warehouse.ParseParam(p.Type, string(cell))
			if err != nil {
				return warehouse.Statement{}, fmt.Errorf("parameter %s: %w", p.Name, err)
			}
			params[i].Values = append(params[i].Values, v)
		}
	}
	return warehouse.NewStatement(name, params)
}
