package main

// Every backend registers its URL scheme when imported.
import (
	_ "github.com/tablekit/tablekit/backend/aliyuntablestore" // tablestore://
	_ "github.com/tablekit/tablekit/backend/awsdynamodb"      // dynamodb://
	_ "github.com/tablekit/tablekit/backend/gcpbigtable"      // bigtable://
	_ "github.com/tablekit/tablekit/fileengine"               // file://
	_ "github.com/tablekit/tablekit/localengine"              // mem://
)
