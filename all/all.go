// Package all is for programs that open their backend by URL: it registers
// every tablekit backend's URL scheme, so that a program can run on
// whichever backend its configuration names with one import:
//
//	import _ "github.com/tablekit/tablekit/all"
//
//	db, err := tablekit.Open(ctx, os.Getenv(tablekit.EnvURL))
//
// The schemes are mem:// (package localengine), file:// (fileengine),
// bigtable:// (backend/gcpbigtable), dynamodb:// (backend/awsdynamodb) and
// tablestore:// (backend/aliyuntablestore); each package's Scheme constant
// documents its URL. Importing all links every SDK into the program; a
// program that needs one backend imports that package alone.
package all

import (
	_ "github.com/tablekit/tablekit/backend/aliyuntablestore" // tablestore://
	_ "github.com/tablekit/tablekit/backend/awsdynamodb"      // dynamodb://
	_ "github.com/tablekit/tablekit/backend/gcpbigtable"      // bigtable://
	_ "github.com/tablekit/tablekit/fileengine"               // file://
	_ "github.com/tablekit/tablekit/localengine"              // mem://
)
