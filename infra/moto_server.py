"""moto server, with DynamoDB's isolation.

moto serves requests on many threads and applies a TransactWriteItems step by step, with no
lock: two concurrent transactions on one item can both pass their conditions, which real
DynamoDB never allows (transactions are serializable; a conditional write is atomic). Our
tests race workers on purpose, so this launcher makes every DynamoDB operation of the
emulator run under one lock — the service's guarantee, not a fake of it — and then starts
the ordinary moto server with the same arguments (`-H host -p port`).
"""

import functools
import threading

from moto.dynamodb.models import DynamoDBBackend
from moto.server import main

_LOCK = threading.RLock()
_OPERATIONS = [
    "put_item", "get_item", "update_item", "delete_item", "query", "scan",
    "batch_get_item", "batch_write_item", "transact_write_items", "transact_get_items",
]


def _serialized(operation):
    @functools.wraps(operation)
    def run(*args, **kwargs):
        with _LOCK:
            return operation(*args, **kwargs)
    return run


for _name in _OPERATIONS:
    setattr(DynamoDBBackend, _name, _serialized(getattr(DynamoDBBackend, _name)))

if __name__ == "__main__":
    main()
