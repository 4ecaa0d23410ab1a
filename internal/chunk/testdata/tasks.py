"""Tasks: a tiny to-do list kept in a JSON file."""

import json
from pathlib import Path


class TaskList:
    """A list of tasks stored in one file."""

    def __init__(self, path):
        self.path = Path(path)
        self.tasks = []
        if self.path.exists():
            self.tasks = json.loads(self.path.read_text())

    def add(self, title):
        self.tasks.append({"title": title, "done": False})
        self.save()

    def finish(self, title):
        for task in self.tasks:
            if task["title"] == title:
                task["done"] = True
        self.save()

    def save(self):
        self.path.write_text(json.dumps(self.tasks, indent=2))


def pending(tasks):
    """Return the titles of the tasks not done yet."""
    return [t["title"] for t in tasks.tasks if not t["done"]]


@staticmethod
def main():
    tasks = TaskList("tasks.json")
    tasks.add("write the report")
    tasks.add("water the plants")
    tasks.finish("water the plants")
    for title in pending(tasks):
        print(title)


if __name__ == "__main__":
    main()
