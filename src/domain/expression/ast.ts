/** Requirement expressions, e.g. `memory >= 48GiB and gpus >= 1`, `has CUSTOM_NVME or not has CUSTOM_SLOW`. */

export const ComparisonOp = { Eq: '==', Ne: '!=', Ge: '>=', Gt: '>', Le: '<=', Lt: '<' } as const;
export type ComparisonOp = (typeof ComparisonOp)[keyof typeof ComparisonOp];

export type Literal =
  | { readonly kind: 'number'; readonly value: number; /** true when written with a size unit */ readonly sized: boolean }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'boolean'; readonly value: boolean };

export type Expr =
  | { readonly type: 'compare'; readonly fact: string; readonly op: ComparisonOp; readonly value: Literal; readonly pos: number }
  | { readonly type: 'has'; readonly trait: string; readonly pos: number }
  | { readonly type: 'and'; readonly left: Expr; readonly right: Expr }
  | { readonly type: 'or'; readonly left: Expr; readonly right: Expr }
  | { readonly type: 'not'; readonly expr: Expr };
