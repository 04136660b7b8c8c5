// Package tsproto is for the Tablestore adapter and its emulator only (it
// is internal to them): it holds, once, the tables that translate
// Alibaba Cloud Tablestore's protocol enums to tablekit's types, and the
// table of Tablestore's error codes.
//
// Each enum has three spellings: tablekit's, the Go SDK's model type
// (package tablestore, which the adapter speaks) and the protobuf one
// (package otsprotocol, which the emulator decodes and encodes). Their
// numbers do not always agree (the SDK's ActionType counts from 0, the
// protobuf's from 1; the SDK's DefinedColumn_BINARY is 5, the protobuf's
// DCT_BLOB 7), so each table names all three in one row, and each
// direction is a look-up in that one row set:
//
//	op, ok := tsproto.Comparators.FromWire(sf.GetComparator()) // the emulator
//	ct, ok := tsproto.Comparators.SDK(f.Op)                    // the adapter
//
// The error codes are in codes.go.
package tsproto

import (
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"

	"github.com/tablekit/tablekit"
)

// Row is one value of an enum in its three spellings: tablekit's (Kit),
// the SDK model's (SDK) and the protobuf's (Wire).
type Row[K, S, W comparable] struct {
	Kit  K
	SDK  S
	Wire W
}

// Enum is the translation table of one protocol enum: every value both
// sides know, one row each. A value missing from it is one tablekit does
// not model; every look-up reports it with ok = false.
type Enum[K, S, W comparable] []Row[K, S, W]

// SDK returns the SDK's spelling of tablekit's k.
func (e Enum[K, S, W]) SDK(k K) (S, bool) {
	r, ok := e.find(func(r *Row[K, S, W]) bool { return r.Kit == k })
	return r.SDK, ok
}

// Wire returns the protobuf spelling of tablekit's k.
func (e Enum[K, S, W]) Wire(k K) (W, bool) {
	r, ok := e.find(func(r *Row[K, S, W]) bool { return r.Kit == k })
	return r.Wire, ok
}

// FromSDK returns tablekit's spelling of the SDK's s.
func (e Enum[K, S, W]) FromSDK(s S) (K, bool) {
	r, ok := e.find(func(r *Row[K, S, W]) bool { return r.SDK == s })
	return r.Kit, ok
}

// FromWire returns tablekit's spelling of the protobuf's w.
func (e Enum[K, S, W]) FromWire(w W) (K, bool) {
	r, ok := e.find(func(r *Row[K, S, W]) bool { return r.Wire == w })
	return r.Kit, ok
}

// find returns the row that matches, or the zero row and false.
func (e Enum[K, S, W]) find(match func(*Row[K, S, W]) bool) (Row[K, S, W], bool) {
	for i := range e {
		if match(&e[i]) {
			return e[i], true
		}
	}
	return Row[K, S, W]{}, false
}

// Comparators translates a single-column filter's comparator.
var Comparators = Enum[tablekit.CompareOp, tablestore.ComparatorType, otsprotocol.ComparatorType]{
	{tablekit.Equal, tablestore.CT_EQUAL, otsprotocol.ComparatorType_CT_EQUAL},
	{tablekit.NotEqual, tablestore.CT_NOT_EQUAL, otsprotocol.ComparatorType_CT_NOT_EQUAL},
	{tablekit.Greater, tablestore.CT_GREATER_THAN, otsprotocol.ComparatorType_CT_GREATER_THAN},
	{tablekit.GreaterEqual, tablestore.CT_GREATER_EQUAL, otsprotocol.ComparatorType_CT_GREATER_EQUAL},
	{tablekit.Less, tablestore.CT_LESS_THAN, otsprotocol.ComparatorType_CT_LESS_THAN},
	{tablekit.LessEqual, tablestore.CT_LESS_EQUAL, otsprotocol.ComparatorType_CT_LESS_EQUAL},
}

// LogicOps translates a composite filter's combinator.
var LogicOps = Enum[tablekit.LogicOp, tablestore.LogicalOperator, otsprotocol.LogicalOperator]{
	{tablekit.LogicAnd, tablestore.LO_AND, otsprotocol.LogicalOperator_LO_AND},
	{tablekit.LogicOr, tablestore.LO_OR, otsprotocol.LogicalOperator_LO_OR},
	{tablekit.LogicNot, tablestore.LO_NOT, otsprotocol.LogicalOperator_LO_NOT},
}

// RowExistences translates a write condition's row-existence expectation.
var RowExistences = Enum[tablekit.RowExistence, tablestore.RowExistenceExpectation, otsprotocol.RowExistenceExpectation]{
	{tablekit.Ignore, tablestore.RowExistenceExpectation_IGNORE, otsprotocol.RowExistenceExpectation_IGNORE},
	{tablekit.ExpectExist, tablestore.RowExistenceExpectation_EXPECT_EXIST, otsprotocol.RowExistenceExpectation_EXPECT_EXIST},
	{tablekit.ExpectNotExist, tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST, otsprotocol.RowExistenceExpectation_EXPECT_NOT_EXIST},
}

// KeyTypes translates a primary-key column's type: tablekit's three key
// types (tablekit.Type.IsKeyType).
var KeyTypes = Enum[tablekit.Type, tablestore.PrimaryKeyType, otsprotocol.PrimaryKeyType]{
	{tablekit.TypeInteger, tablestore.PrimaryKeyType_INTEGER, otsprotocol.PrimaryKeyType_INTEGER},
	{tablekit.TypeString, tablestore.PrimaryKeyType_STRING, otsprotocol.PrimaryKeyType_STRING},
	{tablekit.TypeBinary, tablestore.PrimaryKeyType_BINARY, otsprotocol.PrimaryKeyType_BINARY},
}

// DefinedColumnTypes translates a defined (pre-declared attribute)
// column's type: tablekit's five value types.
var DefinedColumnTypes = Enum[tablekit.Type, tablestore.DefinedColumnType, otsprotocol.DefinedColumnType]{
	{tablekit.TypeInteger, tablestore.DefinedColumn_INTEGER, otsprotocol.DefinedColumnType_DCT_INTEGER},
	{tablekit.TypeDouble, tablestore.DefinedColumn_DOUBLE, otsprotocol.DefinedColumnType_DCT_DOUBLE},
	{tablekit.TypeBoolean, tablestore.DefinedColumn_BOOLEAN, otsprotocol.DefinedColumnType_DCT_BOOLEAN},
	{tablekit.TypeString, tablestore.DefinedColumn_STRING, otsprotocol.DefinedColumnType_DCT_STRING},
	{tablekit.TypeBinary, tablestore.DefinedColumn_BINARY, otsprotocol.DefinedColumnType_DCT_BLOB},
}

// ActionTypes translates the kind of a Stream record.
var ActionTypes = Enum[tablekit.WriteKind, tablestore.ActionType, otsprotocol.ActionType]{
	{tablekit.WritePut, tablestore.AT_Put, otsprotocol.ActionType_PUT_ROW},
	{tablekit.WriteUpdate, tablestore.AT_Update, otsprotocol.ActionType_UPDATE_ROW},
	{tablekit.WriteDelete, tablestore.AT_Delete, otsprotocol.ActionType_DELETE_ROW},
}
