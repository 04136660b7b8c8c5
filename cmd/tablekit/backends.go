package main

// Every backend registers its URL scheme when imported.
import _ "github.com/tablekit/tablekit/all"
