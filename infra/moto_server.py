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

3. Keyed queries. moto answers a query by looking at every item of the table, which makes a
   query cost as much as everything stored. Here a query on the table reads only its partition,
   and a query on a global secondary index reads only the items under that index key: each
   table keeps, per index, index key -> item keys, brought up to date before each query from
   the keys that writes touched since. moto still sorts, pages and filters the candidates.

And one addition to moto's SES v2: `PutEmailIdentityMailFromAttributes`, which moto does not
serve (a gym's sending domain sets its MAIL FROM when it is created), kept on the identity
and read back by `GetEmailIdentity` as SES answers it: `MailFromAttributes`, its status
PENDING until SES finds the MX record (never, here).
"""

import copy
import functools
import json
import threading
from collections import defaultdict

import moto.dynamodb.models as dynamodb_models
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table
from moto.server import main
from moto.ses.models import EmailIdentity
import moto.sesv2.urls as sesv2_urls
from moto.sesv2.responses import SESV2Response

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


class _IndexKeys:
    """For one table: per global secondary index with one hash attribute, index key -> the
    keys of the items under it. Writes mark the keys they touch; a query first re-files those."""

    def __init__(self, table):
        self.table = table
        self.attrs = {}
        for index in table.global_indexes:
            hashes = [k["AttributeName"] for k in index.schema if k["KeyType"] == "HASH"]
            if len(hashes) == 1:
                self.attrs[index.name] = hashes[0]
        self.keys = {name: defaultdict(set) for name in self.attrs}
        self.filed = {}
        self.touched = set()
        for item in table.all_items():
            self._file((item.hash_key, item.range_key), item)

    def _item(self, key):
        hash_value, range_value = key
        if self.table.range_key_attr is None:
            return self.table.items.get(hash_value)
        return self.table.items.get(hash_value, {}).get(range_value)

    def _file(self, key, item):
        for name, value in self.filed.pop(key, ()):
            under = self.keys[name].get(value)
            if under is not None:
                under.discard(key)
                if not under:
                    del self.keys[name][value]
        if item is None:
            return
        filed = []
        for name, attr in self.attrs.items():
            value = item.attrs.get(attr)
            if value is not None:
                self.keys[name][value].add(key)
                filed.append((name, value))
        if filed:
            self.filed[key] = filed

    def items_under(self, index_name, value):
        for key in self.touched:
            self._file(key, self._item(key))
        self.touched.clear()
        items = (self._item(key) for key in self.keys[index_name].get(value, ()))
        return [item for item in items if item is not None]


def _index_keys(table):
    keys = table.__dict__.get("_openloop_index_keys")
    if keys is None:
        keys = table.__dict__["_openloop_index_keys"] = _IndexKeys(table)
    return keys


def _touch(table, hash_value, range_value):
    keys = table.__dict__.get("_openloop_index_keys")
    if keys is not None:
        keys.touched.add((hash_value, range_value))


def _candidates(table, hash_key, index_name, hash_key_conditions):
    """The items a query can match, or None to let moto look at all of them."""
    if index_name is None:
        if hash_key is None:
            return None
        if table.range_key_attr is None:
            item = table.items.get(hash_key)
            return [] if item is None else [item]
        return list(table.items.get(hash_key, {}).values())
    keys = _index_keys(table)
    attr = keys.attrs.get(index_name)
    conditions = hash_key_conditions or []
    if attr is None or len(conditions) != 1 or conditions[0][0] != attr:
        return None
    return keys.items_under(index_name, conditions[0][1])


def _keyed_query(original):
    @functools.wraps(original)
    def run(self, *args, **kwargs):
        hash_key = args[0] if args else kwargs.get("hash_key")
        index_name = args[7] if len(args) > 7 else kwargs.get("index_name")
        candidates = _candidates(self, hash_key, index_name, kwargs.get("hash_key_conditions"))
        if candidates is None:
            return original(self, *args, **kwargs)
        self.all_items = lambda: candidates
        try:
            return original(self, *args, **kwargs)
        finally:
            del self.all_items
    return run


def _touching_put(original):
    @functools.wraps(original)
    def run(self, item_attrs, *args, **kwargs):
        try:
            return original(self, item_attrs, *args, **kwargs)
        finally:
            try:
                _touch(self, *_item_key(self, item_attrs))
            except Exception:  # a malformed item: moto refused it, nothing was written
                pass
    return run


def _touching_delete(original):
    @functools.wraps(original)
    def run(self, hash_key, range_key, *args, **kwargs):
        try:
            return original(self, hash_key, range_key, *args, **kwargs)
        finally:
            _touch(self, hash_key, range_key)
    return run


def _touching_update(original):
    """An update changes the item in place, so its key is marked here."""
    @functools.wraps(original)
    def run(self, table_name, key, *args, **kwargs):
        try:
            return original(self, table_name, key, *args, **kwargs)
        finally:
            table = self.tables.get(table_name)
            if table is not None:
                try:
                    _touch(table, *_item_key(table, key))
                except Exception:
                    pass
    return run


def _transact_write_items(original):
    @functools.wraps(original)
    def run(self, transact_items, *args, **kwargs):
        saved = _saved_items(self, transact_items)
        try:
            return original(self, transact_items, *args, **kwargs)
        except BaseException:
            _restore(saved)
            raise
        finally:
            for table, hash_value, range_value, _ in saved:
                _touch(table, hash_value, range_value)
    return run


def _serialized(operation):
    @functools.wraps(operation)
    def run(*args, **kwargs):
        with _LOCK:
            return operation(*args, **kwargs)
    return run


DynamoDBBackend.transact_write_items = _transact_write_items(DynamoDBBackend.transact_write_items)
DynamoDBBackend.update_item = _touching_update(DynamoDBBackend.update_item)
Table.put_item = _touching_put(Table.put_item)
Table.delete_item = _touching_delete(Table.delete_item)
Table.query = _keyed_query(Table.query)
for _name in _OPERATIONS:
    setattr(DynamoDBBackend, _name, _serialized(getattr(DynamoDBBackend, _name)))

def _put_mail_from(self):
    identity = self.sesv2_backend.get_email_identity(email_identity=self._get_param("EmailIdentity"))
    asked = json.loads(self.body or "{}")
    identity.mail_from_attributes = {
        "MailFromDomain": asked.get("MailFromDomain", ""),
        "MailFromDomainStatus": "PENDING",
        "BehaviorOnMxFailure": asked.get("BehaviorOnMxFailure", "USE_DEFAULT_VALUE"),
    }
    return json.dumps({})


def _with_mail_from(answer):
    @functools.wraps(answer.fget)
    def read(self):
        shown = answer.fget(self)
        if getattr(self, "mail_from_attributes", None):
            shown["MailFromAttributes"] = self.mail_from_attributes
        return shown
    return property(read)


SESV2Response.put_email_identity_mail_from_attributes = _put_mail_from
EmailIdentity.get_response_object = _with_mail_from(EmailIdentity.get_response_object)
sesv2_urls.url_paths["{0}/v2/email/identities/(?P<EmailIdentity>[^/]+)/mail-from$"] = SESV2Response.dispatch

if __name__ == "__main__":
    main()
