// generated from fisk_ls/knowledge/settings.schema.json by scripts/editor_contracts.py — do not edit.
/** The `fisk` settings: type, limits and default (JSON Schema, no descriptions). */
export const SETTINGS = {
  "paths": {
    "type": "array",
    "items": {
      "type": "string"
    }
  },
  "exclude": {
    "type": "array",
    "items": {
      "type": "string"
    }
  },
  "topK": {
    "type": "integer",
    "minimum": 1,
    "maximum": 20,
    "default": 5
  },
  "watch": {
    "type": "boolean",
    "default": true
  },
  "workspaceSymbols": {
    "type": "boolean",
    "default": true
  },
  "prebuilt": {
    "type": "string",
    "maxLength": 4096
  },
  "embeddings": {
    "type": "object",
    "properties": {
      "provider": {
        "type": "string",
        "enum": [
          "openai",
          "builtin"
        ],
        "default": "openai"
      },
      "modelPath": {
        "type": "string"
      },
      "threads": {
        "type": "integer",
        "minimum": 0,
        "maximum": 256,
        "default": 0
      },
      "baseUrl": {
        "type": "string"
      },
      "model": {
        "type": "string"
      },
      "apiKeyEnv": {
        "type": "string"
      },
      "timeout": {
        "type": "number",
        "minimum": 0.1,
        "maximum": 3600,
        "default": 30.0
      },
      "queryTimeout": {
        "type": "number",
        "minimum": 0.05,
        "maximum": 60,
        "default": 2.0
      },
      "queryPrefix": {
        "type": "string"
      },
      "documentPrefix": {
        "type": "string"
      }
    },
    "if": {
      "properties": {
        "provider": {
          "const": "builtin"
        }
      },
      "required": [
        "provider"
      ]
    },
    "then": {
      "properties": {
        "baseUrl": {
          "const": ""
        }
      }
    },
    "else": {
      "properties": {
        "baseUrl": {
          "minLength": 1
        },
        "model": {
          "minLength": 1
        }
      },
      "required": [
        "baseUrl",
        "model"
      ]
    }
  },
  "expansion": {
    "type": "object",
    "properties": {
      "provider": {
        "type": "string",
        "enum": [
          "none",
          "openai",
          "editor"
        ],
        "default": "none"
      },
      "baseUrl": {
        "type": "string"
      },
      "model": {
        "type": "string"
      },
      "apiKeyEnv": {
        "type": "string"
      },
      "timeout": {
        "type": "number",
        "minimum": 0.1,
        "maximum": 120,
        "default": 10.0
      }
    },
    "if": {
      "properties": {
        "provider": {
          "const": "openai"
        }
      },
      "required": [
        "provider"
      ]
    },
    "then": {
      "properties": {
        "baseUrl": {
          "minLength": 1
        },
        "model": {
          "minLength": 1
        }
      },
      "required": [
        "baseUrl",
        "model"
      ]
    }
  }
} as const;

/** Request limits and agent.yaml-only settings (the schema's `$defs`). */
export const DEFS = {
  "query": {
    "type": "string",
    "maxLength": 2000
  },
  "also": {
    "type": "array",
    "items": {
      "type": "string",
      "maxLength": 2000
    },
    "maxItems": 4
  },
  "scope": {
    "type": "array",
    "items": {
      "type": "string",
      "maxLength": 1000
    },
    "maxItems": 16
  },
  "tags": {
    "type": "array",
    "items": {
      "type": "string",
      "maxLength": 100
    },
    "maxItems": 16
  },
  "showContext": {
    "type": "integer",
    "minimum": 0,
    "maximum": 5,
    "default": 0
  },
  "toolContext": {
    "type": "integer",
    "minimum": 0,
    "maximum": 2,
    "default": 0
  },
  "maxInjectedTokens": {
    "type": "integer",
    "minimum": 1,
    "maximum": 1000000,
    "default": 6000
  }
} as const;
