// Package reconcile compares, for one date, the real-time figures of the
// dashboard view (ventas_hora_pais) with the batch figures of the ERP's
// order lines (lineas_pedido), and explains the differences by the orders
// the stream counted as dropped: too late (reason too_late) or invalid
// (reason "invalid: ...") in pedidos_descartados.
//
// # What is compared, and why per day
//
// lineas_pedido has a date (fecha) and no time of day, so the batch side
// cannot be split by hour without inventing times. The comparison is
// therefore per day and country: the batch totals of fecha D (importe =
// SUM(importe), pedidos = COUNT(DISTINCT pedido_id), unidades =
// SUM(cantidad)) against the sum of the real-time windows whose start lies
// in D, in UTC unless another zone is asked for (the ERP's fecha is a
// calendar day in the ERP's zone; with hourly windows and a whole-hour
// offset the windows tile the zone's day exactly). The hours are still
// listed, country by country: each window's current value, its timing, and
// the drops placed in that window, so a person sees where a difference
// arose. Only the daily totals are judged.
//
// Batch rows follow the warehouse's newest-generation rule (the rule of
// ventas_diarias_sku): of each source object only the rows of its newest
// loaded generation for the date count, so a corrected re-export is not
// counted twice. The named reads of package warehouse that reconcile uses
// (country_totals, day_drops) share that rule with replay's day_orders.
//
// # What explains a difference
//
// difference = batch - real time, per measure. A dropped order explains the
// batch amounts of its own lines: a drop whose pedido_id has lines on date
// D explains, in the country of those lines, SUM(importe), one order and
// SUM(cantidad) of them. Each (pedido_id, pais) explains once, however
// many rows recorded it (a too_late record is preferred to invalid ones).
// Drops are those of the aggregation (too_late) and the invalid messages
// (which belong to none). What remains,
//
//	residual = difference - too_late explained - invalid explained,
//
// must be zero in every measure; a country with a non-zero residual is
// unexplained, and the command exits non-zero. Drops are matched by
// pedido_id rather than by what the message said, because an invalid
// message's amount or country is often what made it invalid.
//
// Known limits, shown rather than hidden: an order dead-lettered as invalid
// and later republished and accepted still counts as explained, so it turns
// into a negative residual (the report lists the drop, so a person can see
// it); windows whose latest pane is still EARLY are counted as open, since
// their real-time figure can still move; an order whose lines carry two
// countries counts once in each.
package reconcile
