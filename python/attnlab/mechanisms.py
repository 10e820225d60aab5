"""attnlab's attention mechanisms as data: mechanisms.json beside this file, which the build
writes from attnlab's mechanism registry (core/attention/registry.h, attention_mechanism_table;
`cmake --build build --target mechanisms_json`) and ctest mechanisms_json_current keeps equal to
it. The package reads every mechanism rule it needs from there (each option's default, where a
mechanism runs, the input length it takes) instead of keeping copies that could drift: a rule
changed in C++ changes here once the table is regenerated.
"""
import json
import os

TABLE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mechanisms.json")


def _load():
    with open(TABLE_PATH) as f:
        return {m["name"]: m for m in json.load(f)["mechanisms"]}


MECHANISMS = _load()  # name -> the registry's row, in registry order


def option_defaults(name):
    """{option: default} of a mechanism's options, as attnlab's reader states them (an option
    read only through a custom check has no stated default and is left out)."""
    return {o["key"]: o["default"] for o in MECHANISMS[name]["options"] if "default" in o}


def option_value(name, options, key):
    """The option as given in `options` (model.attention_options.<name>), else its default."""
    return options[key] if key in options else option_defaults(name).get(key)


def _apply_first_layer(name, options, names, one_name):
    rule = MECHANISMS[name]["first_layer"]
    if not rule or option_value(name, options, rule["option"]) != rule["value"]:
        return
    for i in range(1, len(names)):
        if names[i] != name:
            continue
        if not one_name:
            raise ValueError(rule["refusal"].replace("{layer}", str(i), 1))
        names[i] = rule["later"]


def _check_input_length(name, options, input_length, input_source):
    key = MECHANISMS[name]["input_length_option"]
    if not key or input_length <= 0:
        return
    slots = option_value(name, options, key)
    if isinstance(slots, int) and slots < input_length:
        raise ValueError(f"model.attention_options.{name}.{key} ({slots}) is shorter than the "
                         f"model's input: {input_source or 'the input'} gives {input_length} "
                         f"tokens; set {key} to at least {input_length}")


def resolve_layers(attention, layers, all_options, input_length=0, input_source=""):
    """model.attention as attnlab runs it (resolved_attention_layers, core/attention/
    registry.h): one name per layer, one name given for all repeated, then the layout rules of
    every named mechanism, in registry order. Raises ValueError with attnlab's message (naming
    the config key) when a rule refuses the layout. The rules that are code in attnlab (ky's
    centred window in a causal model) are the modules' to check here."""
    names = [attention] if isinstance(attention, str) else list(attention)
    one_name = len(names) == 1
    if not one_name and len(names) != layers:
        raise ValueError(f"model.attention lists {len(names)} mechanisms but model.layers is "
                         f"{layers} (give one name for all layers, or one per layer)")
    names = names * layers if one_name else names
    for name in [m for m in MECHANISMS if m in names]:  # the set before any rule rewrites
        options = all_options.get(name, {})
        _apply_first_layer(name, options, names, one_name)
        _check_input_length(name, options, input_length, input_source)
    return names
