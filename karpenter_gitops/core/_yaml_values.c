/* Values straight from libyaml's parse events, for the plain manifests that are nearly every file we read.
 *
 * Why: reading YAML was the largest part of `validate`. libyaml parses a 5,000-object file in
 * about 0.2 s; PyYAML then makes a Python event object and two marks per event, and yaml_reader.py turns
 * those into values, which together cost four times the parse. Here the same libyaml events become
 * dicts, lists and strings in C.
 *
 * This is a fast path, not a second reader: it builds a document only from what yaml_reader's own
 * builder would build the same way (mappings, sequences, quoted scalars, and plain scalars resolved by
 * yaml_reader's own resolver, which it is given). At anything else (an anchor or alias, an explicit tag,
 * a merge key, a repeated or unhashable key, deep nesting, a parse error, a resolver error) it gives up
 * and returns None, and yaml_reader reads the whole text again with its builder, which gives the values
 * or the error in its words. So the values are the builder's by construction; a property test in
 * tests/core/test_yaml_reader.py compares the two on random text.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <yaml.h>

typedef struct {
    PyObject *value; /* the dict or list being built */
    PyObject *key;   /* a mapping's key waiting for its value, or NULL */
    int is_map;
} Frame;

typedef struct {
    PyObject *plain;       /* dict: plain scalar text -> resolved value (yaml_reader's cache, shared) */
    PyObject *quoted;      /* dict: short quoted text -> the one str object for it */
    PyObject *resolve;     /* callable: plain text -> value, caching it in `plain` */
    PyObject *merge;       /* the value `resolve` gives for `<<` */
    Py_ssize_t max_depth;
    Py_ssize_t shared_length;
    int unique_keys;
} Reading;

/* The value of a scalar event (a new reference), or NULL to give up. */
static PyObject *scalar(const Reading *reading, const yaml_event_t *event)
{
    PyObject *text = PyUnicode_DecodeUTF8(
        (const char *)event->data.scalar.value, (Py_ssize_t)event->data.scalar.length, "strict");
    if (text == NULL)
        return NULL;
    if (!event->data.scalar.plain_implicit) { /* quoted, literal or folded: a string as written */
        if (PyUnicode_GET_LENGTH(text) > reading->shared_length)
            return text;
        PyObject *shared = PyDict_SetDefault(reading->quoted, text, text);
        Py_XINCREF(shared);
        Py_DECREF(text);
        return shared;
    }
    PyObject *value = PyDict_GetItemWithError(reading->plain, text);
    if (value != NULL) {
        Py_INCREF(value);
        Py_DECREF(text);
        return value;
    }
    if (PyErr_Occurred()) {
        Py_DECREF(text);
        return NULL;
    }
    value = PyObject_CallOneArg(reading->resolve, text);
    Py_DECREF(text);
    if (value == reading->merge) { /* `<<`: merges are the builder's */
        Py_DECREF(value);
        return NULL;
    }
    return value;
}

/* Put `value` (a new reference, always consumed) into the frame on top; 0, or -1 to give up. */
static int attach(const Reading *reading, Frame *frame, PyObject *value)
{
    if (!frame->is_map) {
        int failed = PyList_Append(frame->value, value);
        Py_DECREF(value);
        return failed;
    }
    if (frame->key == NULL) {
        frame->key = value;
        return 0;
    }
    PyObject *key = frame->key;
    frame->key = NULL;
    int present = PyDict_Contains(frame->value, key); /* -1: unhashable */
    int failed = present < 0 || (present && reading->unique_keys) || PyDict_SetItem(frame->value, key, value) < 0;
    Py_DECREF(key);
    Py_DECREF(value);
    return failed ? -1 : 0;
}

/* The documents of the UTF-8 or BOM-marked `data`, or NULL (no exception set) to leave them to the builder. */
static PyObject *read_documents(const Reading *reading, const char *data, Py_ssize_t size)
{
    yaml_parser_t parser;
    yaml_event_t event;
    Frame *stack = PyMem_Calloc((size_t)reading->max_depth, sizeof(Frame));
    PyObject *documents = PyList_New(0);
    PyObject *root = NULL;
    Py_ssize_t depth = 0;
    int ok = stack != NULL && documents != NULL && yaml_parser_initialize(&parser);
    if (!ok) {
        PyMem_Free(stack);
        Py_XDECREF(documents);
        return PyErr_NoMemory();
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)data, (size_t)size);
    for (int done = 0; ok && !done;) {
        if (!yaml_parser_parse(&parser, &event)) {
            ok = 0;
            break;
        }
        PyObject *value = NULL;
        switch (event.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            Py_CLEAR(root);
            break;
        case YAML_DOCUMENT_END_EVENT:
            ok = PyList_Append(documents, root != NULL ? root : Py_None) == 0;
            Py_CLEAR(root);
            break;
        case YAML_SCALAR_EVENT:
            ok = event.data.scalar.anchor == NULL && event.data.scalar.tag == NULL;
            value = ok ? scalar(reading, &event) : NULL;
            ok = value != NULL;
            break;
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT: {
            int is_map = event.type == YAML_MAPPING_START_EVENT;
            const yaml_char_t *anchor = is_map ? event.data.mapping_start.anchor : event.data.sequence_start.anchor;
            const yaml_char_t *tag = is_map ? event.data.mapping_start.tag : event.data.sequence_start.tag;
            ok = anchor == NULL && tag == NULL && depth < reading->max_depth;
            if (ok) {
                Frame *frame = &stack[depth];
                frame->value = is_map ? PyDict_New() : PyList_New(0);
                frame->key = NULL;
                frame->is_map = is_map;
                ok = frame->value != NULL;
                depth += ok;
            }
            break;
        }
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            depth--;
            value = stack[depth].value;
            stack[depth].value = NULL;
            break;
        case YAML_ALIAS_EVENT: /* aliases (and their bounds) are the builder's */
        default:                /* stream start */
            ok = event.type == YAML_STREAM_START_EVENT;
            break;
        }
        yaml_event_delete(&event);
        if (ok && value != NULL) {
            if (depth == 0) {
                Py_XSETREF(root, value);
            } else {
                ok = attach(reading, &stack[depth - 1], value) == 0;
            }
        }
    }
    yaml_parser_delete(&parser);
    for (Py_ssize_t i = 0; i < depth; i++) {
        Py_XDECREF(stack[i].value);
        Py_XDECREF(stack[i].key);
    }
    PyMem_Free(stack);
    Py_XDECREF(root);
    if (!ok) {
        Py_DECREF(documents);
        PyErr_Clear(); /* the builder reads it again and raises what is wrong, in its words */
        return NULL;
    }
    return documents;
}

PyDoc_STRVAR(documents_doc,
"documents(data, plain, quoted, resolve, merge, max_depth, shared_length, unique_keys, /)\n--\n\n"
"Every document of data (str or bytes) as yaml_reader's builder makes it, or None where that builder must read it.");

static PyObject *documents(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "documents() takes 8 arguments");
        return NULL;
    }
    Reading reading = {args[1], args[2], args[3], args[4], PyLong_AsSsize_t(args[5]), PyLong_AsSsize_t(args[6]),
                       PyObject_IsTrue(args[7])};
    if (!PyDict_CheckExact(reading.plain) || !PyDict_CheckExact(reading.quoted) || reading.max_depth < 1 ||
        reading.shared_length < 0 || reading.unique_keys < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "documents(): plain and quoted must be dicts, the sizes positive");
        return NULL;
    }
    const char *data;
    Py_ssize_t size;
    if (PyUnicode_Check(args[0])) {
        data = PyUnicode_AsUTF8AndSize(args[0], &size);
        if (data == NULL) { /* lone surrogates: the builder refuses them in its words */
            PyErr_Clear();
            Py_RETURN_NONE;
        }
    } else if (PyBytes_AsStringAndSize(args[0], (char **)&data, &size) < 0) {
        return NULL;
    }
    PyObject *found = read_documents(&reading, data, size);
    if (found == NULL && !PyErr_Occurred())
        Py_RETURN_NONE;
    return found;
}

static PyMethodDef methods[] = {
    {"documents", (PyCFunction)(void (*)(void))documents, METH_FASTCALL, documents_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_yaml_values",
    "Plain YAML documents built into values in C from libyaml's events (yaml_reader's fast path).", -1, methods,
};

PyMODINIT_FUNC PyInit__yaml_values(void)
{
    return PyModule_Create(&module);
}
