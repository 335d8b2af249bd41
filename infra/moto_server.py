"""moto server, with DynamoDB's isolation and without its transaction copies.

Two changes to moto 5.2.5's DynamoDB, then the ordinary moto server with the same arguments
(`-H host -p port`):

1. Serializable operations. moto serves requests on many threads and applies a
   TransactWriteItems step by step, with no lock: two concurrent transactions on one item can
   both pass their conditions, which real DynamoDB never allows (transactions are
   serializable; a conditional write is atomic). Our tests race workers on purpose, so every
   DynamoDB operation of the emulator runs under one lock — the service's guarantee, not a
   fake of it.

2. No table copies. For its rollback, moto deep-copies the whole table once per item of every
   transaction, which makes each transaction cost as much as everything stored (and every
   other request waits behind that copy under the lock). Here a transaction first copies only
   the items it names (at most one copy per item, dropped when it returns), the table copy
   becomes the table itself, and a cancelled transaction puts those items back. moto's own
   checks, error codes and cancellation reasons are untouched.
"""

import copy
import functools
import threading

import moto.dynamodb.models as dynamodb_models
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table
from moto.server import main

_LOCK = threading.RLock()
_OPERATIONS = [
    "put_item", "get_item", "update_item", "delete_item", "query", "scan",
    "batch_get_item", "batch_write_item", "transact_write_items", "transact_get_items",
]


class _CopyWithoutTables:
    """moto's `copy` module as its DynamoDB models see it: a table "copied" for a
    transaction's rollback is the table itself (the items are saved instead, below)."""

    def __getattr__(self, name):
        return getattr(copy, name)

    @staticmethod
    def deepcopy(value, memo=None):
        return value if isinstance(value, Table) else copy.deepcopy(value, memo)


dynamodb_models.copy = _CopyWithoutTables()


def _item_key(table, attrs):
    hash_value = DynamoType(attrs[table.hash_key_attr])
    range_value = None
    if table.range_key_attr is not None:
        range_value = DynamoType(attrs[table.range_key_attr])
    return hash_value, range_value


def _saved_items(backend, transact_items):
    """(table, hash, range, a copy of the item or None) for each item the transaction names."""
    saved = []
    for entry in transact_items:
        for op_type, op in entry.items():
            table = backend.tables.get(op.get("TableName"))
            attrs = op.get("Item") if op_type == "Put" else op.get("Key")
            if table is None or not attrs:
                continue
            try:
                hash_value, range_value = _item_key(table, attrs)
                current = table.get_item(hash_value, range_value)
            except Exception:  # a malformed key: moto's own validation answers it
                continue
            saved.append((table, hash_value, range_value, copy.deepcopy(current)))
    return saved


def _restore(saved):
    for table, hash_value, range_value, item in reversed(saved):
        if range_value is None:
            if item is None:
                table.items.pop(hash_value, None)
            else:
                table.items[hash_value] = item
        else:
            if item is None:
                table.items.get(hash_value, {}).pop(range_value, None)
                if hash_value in table.items and not table.items[hash_value]:
                    del table.items[hash_value]
            else:
                table.items[hash_value][range_value] = item


def _transact_write_items(original):
    @functools.wraps(original)
    def run(self, transact_items, *args, **kwargs):
        saved = _saved_items(self, transact_items)
        try:
            return original(self, transact_items, *args, **kwargs)
        except BaseException:
            _restore(saved)
            raise
    return run


def _serialized(operation):
    @functools.wraps(operation)
    def run(*args, **kwargs):
        with _LOCK:
            return operation(*args, **kwargs)
    return run


DynamoDBBackend.transact_write_items = _transact_write_items(DynamoDBBackend.transact_write_items)
for _name in _OPERATIONS:
    setattr(DynamoDBBackend, _name, _serialized(getattr(DynamoDBBackend, _name)))

if __name__ == "__main__":
    main()
