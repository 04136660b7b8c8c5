// Command tablestore-emulator runs a Tablestore-wire-compatible test server
// (package backend/aliyuntablestore/tstest) backed by tablekit's in-memory
// local engine, for tests written in any language.
//
// Usage:
//
//	tablestore-emulator [-addr 127.0.0.1:8800] [-instance tstest]
//	    [-access-key-id ID] [-access-key-secret SECRET]
//
// It prints the endpoint as the first line on standard output, then serves
// until SIGINT or SIGTERM. Point any Tablestore SDK at the endpoint with the
// instance name and access key pair given by the flags. Data lives in memory
// and is gone when the program stops. There is no TLS and the only
// credentials are the flags': keep it on a loopback address.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/tablekit/tablekit/backend/aliyuntablestore/tstest"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tablestore-emulator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8800", "TCP address to listen on (port 0 picks a free port)")
	instance := fs.String("instance", tstest.DefaultInstanceName, "instance name requests must carry")
	akID := fs.String("access-key-id", tstest.DefaultAccessKeyID, "access key ID requests must carry")
	akSecret := fs.String("access-key-secret", tstest.DefaultAccessKeySecret, "access key secret requests must be signed with")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	srv, err := tstest.NewServer(tstest.Options{
		Addr: *addr, InstanceName: *instance, AccessKeyID: *akID, AccessKeySecret: *akSecret,
	})
	if err != nil {
		fmt.Fprintln(stderr, "tablestore-emulator:", err)
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	fmt.Fprintln(stdout, srv.Endpoint())
	fmt.Fprintf(stderr, "tablestore-emulator: serving instance %q at %s (access key id %q); stop with Ctrl-C\n",
		*instance, srv.Endpoint(), *akID)
	s := <-sig
	signal.Stop(sig)
	srv.Close()
	fmt.Fprintf(stderr, "tablestore-emulator: %v: stopped\n", s)
	return 0
}
