// Package reconcile compares, for one date, the real-time figures of the
// dashboard view (ventas_hora_pais) with the batch figures of lineas_pedido,
// and explains the differences by the orders the stream dropped
// (pedidos_descartados: too_late, or "invalid: ...").
//
// lineas_pedido has a date and no time of day, so only daily totals per
// country are judged: batch of fecha D (SUM(importe), COUNT(DISTINCT
// pedido_id), SUM(cantidad)) against the windows starting in D (UTC unless
// another zone is asked for: the ERP's fecha is a day in its zone). The
// hours are listed as detail. Batch rows follow the newest-generation rule
// (warehouse's country_totals and day_drops, shared with replay's
// day_orders), so a corrected re-export is not counted twice.
//
// A drop whose pedido_id has lines on D explains those lines' amounts, once
// per (pedido_id, pais) however many rows recorded it (too_late preferred).
// Drops are matched by pedido_id, not by what the message said, since an
// invalid message's amount or country is often what made it invalid.
// residual = batch - real time - too_late - invalid must be zero in every
// measure, or the country is unexplained and the command exits non-zero.
//
// Known limits: an order dead-lettered and later republished and accepted
// turns into a negative residual (its drop is listed); windows whose latest
// pane is EARLY count as open; an order whose lines carry two countries
// counts once in each.
package reconcile
