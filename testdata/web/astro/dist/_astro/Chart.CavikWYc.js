import{u as r}from"./jsxRuntime.module.Dqw-6DmR.js";import"./preact.module.BTqC4RwC.js";function c(){return r("div",{class:"chart",children:"chart"})}export{c as default};
