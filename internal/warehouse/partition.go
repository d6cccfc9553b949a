package warehouse

// The dates BigQuery's DAY partitioning can address, as YYYY-MM-DD: a row
// dated outside sits in the __UNPARTITIONED__ partition, and a job naming
// its table$YYYYMMDD partition fails. The contract refuses such rows and
// the BigQuery adapter such refreshes.
const (
	FirstPartitionDate = "1960-01-01"
	LastPartitionDate  = "2159-12-31"
)
