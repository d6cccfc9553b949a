package remote

import "github.com/alpinashop/alpipe/internal/warehouse/warehousetest"

// newOrderLines keeps this package's tests on the shared generator.
var newOrderLines = warehousetest.OrderLines
