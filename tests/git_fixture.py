"""A small git repository for the converters' tests (they read pages and result files through git, as from a
mirror of the source repository)."""
import subprocess


def git_repo(path, files: dict) -> str:
    """A one-commit git repository at ``path`` holding ``files`` ({relative path: text}); returns its HEAD commit."""
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "files"]):
        subprocess.run(["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                       capture_output=True)
    return subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()
