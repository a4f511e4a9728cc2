"""python-rq end to end: python3 check.py PORT

Enqueues 100 jobs, one that fails and one scheduled 1 s ahead, runs a
burst worker with the scheduler until the scheduled job has run, and prints
one JSON line with what happened.
"""
import datetime
import json
import sys
import time

from redis import Redis
from rq import Queue, Worker
from rq.registry import FailedJobRegistry

import rqjobs

port = int(sys.argv[1])
conn = Redis(host="127.0.0.1", port=port)
conn.flushall()
q = Queue("check", connection=conn)
jobs = [q.enqueue(rqjobs.add, i, i) for i in range(100)]
bad = q.enqueue(rqjobs.fail)
scheduled = q.enqueue_in(datetime.timedelta(seconds=1), rqjobs.add, 1000, 1)
worker = Worker([q], connection=conn)
deadline = time.time() + 30
while time.time() < deadline:
    worker.work(burst=True, with_scheduler=True, logging_level="WARNING")
    if scheduled.get_status(refresh=True) == "finished":
        break
    time.sleep(0.2)  # until the scheduled job is due
right = sum(1 for i, j in enumerate(jobs)
            if j.get_status(refresh=True) == "finished" and j.return_value() == 2 * i)
print(json.dumps({
    "finished_right": right,
    "bad": str(bad.get_status(refresh=True)),
    "failed_registry": len(FailedJobRegistry(queue=q)),
    "scheduled": str(scheduled.get_status(refresh=True)),
    "scheduled_result": scheduled.return_value(),
    "queued_left": len(q),
}))
