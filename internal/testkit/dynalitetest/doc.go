// Package dynalitetest is for tablekit's own tests only: it runs dynalite, a
// Node.js implementation of the DynamoDB API, as a local emulator.
//
// dynalite is a test-only Node dependency pinned in the repository's
// package.json. Install it once, at the repository root:
//
//	npm ci
//
// It is always run in-memory (no --path), bound to 127.0.0.1 on a free port,
// with table status transitions (CREATING, UPDATING, DELETING) set to 0 ms.
// Tables still report CREATING in the CreateTable response and become ACTIVE
// a moment later, so wait for them (dynamodb.NewTableExistsWaiter) before
// writing.
//
// One server per test:
//
//	endpoint := dynalitetest.Start(t)
//
// One server per package, from TestMain:
//
//	var endpoint string
//
//	func TestMain(m *testing.M) {
//		ep, stop, err := dynalitetest.Launch()
//		if err != nil && !errors.Is(err, dynalitetest.ErrNotInstalled) {
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(1)
//		}
//		endpoint = ep
//		code := m.Run()
//		if stop != nil {
//			stop()
//		}
//		os.Exit(code)
//	}
//
//	func TestSomething(t *testing.T) {
//		if endpoint == "" {
//			dynalitetest.Missing(t) // skips, or fails when CI=true
//		}
//		...
//	}
//
// Clients must use static credentials (any values work, the signature is not
// checked), region [Region], and the endpoint as BaseEndpoint.
package dynalitetest
