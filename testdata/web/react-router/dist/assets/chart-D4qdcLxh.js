import{j as r}from"./jsx-runtime-Bz8pMD4I.js";function a(){return r.jsx("div",{className:"chart",children:"chart"})}export{a as default};
