// See package.json: the native re2 is not installed in this project; callers fall back to RegExp.
throw new Error("re2 is not installed in this project (dev/no-re2): use RegExp");
