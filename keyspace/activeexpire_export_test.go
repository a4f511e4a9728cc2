package keyspace

// RunActiveExpire runs one active expiry cycle now (the caller holds the
// lock), as the background goroutine does every 100 ms.
func (ks *Keyspace) RunActiveExpire() { ks.activeExpire(ks.NowMs()) }
