//! The model a session talks to, as ACP's session config option of
//! category `model`: offered in `session/new` and `session/load`, changed
//! with `session/set_config_option`, so an editor's picker and a harness's
//! `-m provider/model` (Harbor) choose it the way the protocol defines.
//!
//! Guarantees: the option's values are the provider's own model names (what
//! it lists, with the current model always among them); a value outside
//! that list is refused with the list's size and how to see it, and
//! nothing changes; an accepted one goes to the runtime as
//! `Op::SwitchModel` in request order, so a prompt sent right after it runs
//! on the new model. A provider that lists nothing offers its current model
//! and accepts any name, which the runtime's switch then checks.

use agent_client_protocol_schema::v1::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigOptionValue,
    SessionConfigSelectOption, SetSessionConfigOptionRequest,
};
use axon_protocol::Op;
use axon_runtime::OfferedModels;
use serde_json::{Value, json};

use crate::rpc::RpcError;
use crate::session::AcpSession;

/// The id of axon's one config option.
pub(crate) const MODEL_OPTION: &str = "model";

/// The session's config options (`configOptions` of `session/new`,
/// `session/load` and `session/set_config_option`): the model, when a
/// provider is configured.
pub(crate) fn config_options(models: Option<&OfferedModels>) -> Vec<SessionConfigOption> {
    let Some(models) = models else { return Vec::new() };
    let mut values: Vec<&str> = models.listed.iter().flatten().map(String::as_str).collect();
    if !values.contains(&models.current.as_str()) {
        values.insert(0, &models.current);
    }
    let options: Vec<SessionConfigSelectOption> = values
        .into_iter()
        .map(|name| SessionConfigSelectOption::new(name.to_string(), name.to_string()))
        .collect();
    vec![
        SessionConfigOption::select(MODEL_OPTION, "Model", models.current.clone(), options)
            .category(SessionConfigOptionCategory::Model)
            .description(format!("The {} model the next turn talks to", models.provider)),
    ]
}

/// The config options as JSON, for a response built by hand.
pub(crate) fn config_options_json(models: Option<&OfferedModels>) -> Value {
    serde_json::to_value(config_options(models)).unwrap_or_else(|_| json!([]))
}

/// `session/set_config_option`: checks the value, switches the session's
/// model, and answers with every option's new value.
pub(crate) fn set_config_option(
    session: &AcpSession,
    request: SetSessionConfigOptionRequest,
) -> Result<Value, RpcError> {
    if request.config_id.0.as_ref() != MODEL_OPTION {
        return Err(RpcError::invalid_params(format!(
            "unknown config option `{}`: axon offers `{MODEL_OPTION}`",
            request.config_id.0
        )));
    }
    let SessionConfigOptionValue::ValueId { value } = request.value else {
        return Err(RpcError::invalid_params(
            "the `model` option takes a model name, not a boolean",
        ));
    };
    let model = value.0.to_string();
    let updated = {
        let mut state = session.state();
        let Some(models) = state.models.as_mut() else {
            return Err(RpcError::invalid_params(
                "no model provider is configured, so there is no model to choose",
            ));
        };
        if let Some(listed) = &models.listed
            && !listed.contains(&model)
            && model != models.current
        {
            return Err(RpcError::invalid_params(format!(
                "{} does not offer `{model}`: pick one of the {} values of the `model` option",
                models.provider,
                listed.len()
            )));
        }
        models.current = model.clone();
        models.clone()
    };
    session.submit(Op::SwitchModel { model });
    let options = config_options(Some(&updated));
    Ok(json!({ "configOptions": options }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offered(listed: Option<&[&str]>) -> OfferedModels {
        OfferedModels {
            provider: "deepseek".into(),
            current: "deepseek-chat".into(),
            listed: listed.map(|l| l.iter().map(|m| (*m).to_string()).collect()),
        }
    }

    #[test]
    fn the_model_option_lists_the_providers_models_with_the_current_one() {
        let options =
            config_options_json(Some(&offered(Some(&["deepseek-reasoner", "deepseek-v4"]))));
        let option = &options[0];
        assert_eq!(option["id"], "model");
        assert_eq!(option["category"], "model");
        assert_eq!(option["type"], "select");
        assert_eq!(option["currentValue"], "deepseek-chat");
        let values: Vec<&str> = option["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["value"].as_str().unwrap())
            .collect();
        assert_eq!(values, ["deepseek-chat", "deepseek-reasoner", "deepseek-v4"]);
    }

    #[test]
    fn without_a_list_only_the_current_model_is_offered() {
        let options = config_options_json(Some(&offered(None)));
        assert_eq!(options[0]["options"].as_array().unwrap().len(), 1);
        assert_eq!(config_options_json(None), json!([]));
    }
}
